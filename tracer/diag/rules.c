/*
 * Diagnosis of one process, part 2: the verdict (see diag.h).
 *
 * ct_diag_end picks the final error (what the program saw) from the facts
 * of facts.c, then asks the rules below, in order, which explains it; the
 * first rule that does writes the layer, the root step, the summary and
 * the fix.  The order is the argument: a loader failure explains
 * everything after it, the earliest low-level failure (device node,
 * handshake, RM, UVM) explains the driver's code, and only with none of
 * those is the code itself the verdict.  The mapping from low-level faults
 * to the codes users see is the one measured on the real 580 driver
 * (tests/fixtures/h200-580/README.md); the field cases and fixes are those
 * of SCENARIOS.md.  Codes are named from the generated tables
 * (cutrace_gen/codes.h); the texts of a code, an errno or a failing RM/UVM
 * call are data tables.
 */
#include "diag_int.h"

/* every text here goes into a fixed buffer and is cut, on purpose, at its end */
#pragma GCC diagnostic ignored "-Wformat-truncation"

#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <strings.h>

#include "cutrace_gen/codes.h"
#include "selectors.h"
#include "inject_rules.h"
#include "version.h"
#include "xlat.h"
/* the hot paths format many short strings: the cheaper snprintf (fmt.c) */
#define snprintf ct_snprintf
/* a call that returned after this long is named in a healthy verdict */
#define CT_SLOW_CALL_NS 1000000000ull
#define vsnprintf ct_vsnprintf


/* what the rules work on */
struct judge {
	struct ct_diag *d;
	struct ct_verdict *v;
	const struct cutrace_header *h;
	const struct fact *final;  /* what the program saw, NULL: nothing failed */
	const struct fact *failed; /* the call the verdict names: the final, or for a failing
				    * runtime call the driver call that failed under it */
	const struct fact *root;   /* the low-level failure that explains the final */
};

/* ---- texts: device nodes ------------------------------------------------------------- */
static const char *node_label(unsigned kind)
{
	switch (kind) {
	case CT_NODE_CTL: return "the control node";
	case CT_NODE_GPU: return "the GPU node";
	case CT_NODE_UVM: return "the unified-memory node";
	case CT_NODE_UVM_TOOLS: return "the UVM tools node";
	case CT_NODE_CAPS: return "a capability node (MIG/fabric)";
	case CT_NODE_IMEX: return "the IMEX channel node (fabric memory)";
	case CT_NODE_DXG: return "WSL2's GPU node";
	default: return "an NVIDIA node";
	}
}

#define FIX_UVM_MISSING                                                                            \
	"load nvidia_uvm and create its nodes (sudo nvidia-modprobe -u -c 0, or modprobe nvidia_uvm); " \
	"in a container pass /dev/nvidia-uvm and /dev/nvidia-uvm-tools (--device, CDI or --gpus)"
#define FIX_CAPS_DENIED                                                                            \
	"MIG needs the capability nodes /dev/nvidia-caps/* in the container and its device cgroup "  \
	"(toolkit 1.18+ regressed this for non-privileged MIG, NVIDIA/nvidia-container-toolkit#1740): " \
	"pass them (--device, CDI), and check their modes against "                                  \
	"/proc/driver/nvidia/capabilities/*/access"

#define FIX_GPU_INIT                                                                                         \
	"look for 'RmInitAdapter failed' / 'rm_init_adapter failed' in dmesg ('cutrace run' and 'doctor' "   \
	"decode it where the kernel log is readable); reset or power-cycle the GPU and check that the GSP "  \
	"firmware matches the driver version (/lib/firmware/nvidia/VERSION/gsp_*.bin)"

#define FIX_DXG                                                                                              \
	"WSL2 reaches the Windows NVIDIA driver through /dev/dxg: update WSL and the Windows driver "        \
	"(wsl --update, then wsl --shutdown) and check that the GPU works in Windows; in a container on "    \
	"WSL pass --device /dev/dxg and mount /usr/lib/wsl (docker run --gpus all does); dxgkrnl logs "      \
	"its errors in dmesg"

/* a failed open of an NVIDIA node: the first row whose errno and node kind
 * match (0: any) */
static const struct node_fault {
	int err;
	unsigned kind;            /* CT_NODE_* */
	const char *what;         /* after "open(PATH) failed with ENAME: the ... node " */
	const char *fix;          /* NULL: look at the node and the kernel log */
} node_faults[] = {
	{ ENOENT, CT_NODE_UVM, "does not exist", FIX_UVM_MISSING },
	{ ENOENT, CT_NODE_UVM_TOOLS, "does not exist", FIX_UVM_MISSING },
	{ ENOENT, CT_NODE_DXG, "does not exist", FIX_DXG },
	{ 0, CT_NODE_DXG, "could not be opened", FIX_DXG },
	{ ENOENT, CT_NODE_CAPS, "does not exist",
	  "pass the /dev/nvidia-caps nodes to the container (MIG needs them), or use a toolkit version that "
	  "creates them" },
	{ ENOENT, 0, "does not exist",
	  "check that the NVIDIA kernel module is loaded (lsmod | grep nvidia) and its nodes exist; in a "
	  "container run with GPU access (--gpus all, CDI, or --device for every /dev/nvidia* node)" },
	/* IMEX channels: created by the administrator, never by the driver
	 * (nv-reg.h, NVreg_CreateImexChannel0; catalog Part C, G9) */
	{ ENOENT, CT_NODE_IMEX,
	  "does not exist: fabric memory (CU_MEM_HANDLE_TYPE_FABRIC) is not permitted without it",
	  "create the channel: sudo mknod -m 666 /dev/nvidia-caps-imex-channels/channel0 c MAJOR 0 (MAJOR: "
	  "'nvidia-caps-imex-channels' in /proc/devices), or 'options nvidia NVreg_CreateImexChannel0=1'; in a "
	  "container pass the node" },
	{ EPERM, CT_NODE_IMEX,
	  "is denied by the device cgroup: fabric memory (CU_MEM_HANDLE_TYPE_FABRIC) is not "
	  "permitted",
	  "pass /dev/nvidia-caps-imex-channels/channelN to the container (CDI, --device)" },
	{ EACCES, CT_NODE_IMEX,
	  "is not accessible: fabric memory (CU_MEM_HANDLE_TYPE_FABRIC) is not permitted",
	  "give the user access to the channel node (its mode; nvidia-modprobe honours NVreg_DeviceFileMode)" },
	{ EPERM, CT_NODE_CAPS, "is denied by the device cgroup (operation not permitted)", FIX_CAPS_DENIED },
	{ EPERM, 0, "is denied by the device cgroup (operation not permitted)",
	  "the container's device cgroup does not allow this node (a systemd daemon-reload can drop "
	  "'c 195:* rw', NVIDIA/nvidia-container-toolkit#48): recreate the container, pass the node with "
	  "--device or CDI, or run 'nvidia-ctk system create-dev-char-symlinks --create-all' on the host" },
	{ EACCES, CT_NODE_CAPS, "is not accessible (permission denied)", FIX_CAPS_DENIED },
	{ EACCES, 0, "is not accessible (permission denied)",
	  "give the user read/write access to the node (ls -l /dev/nvidia*: usually mode 0666 or the "
	  "video group) or allow it in SELinux (container_use_devices)" },
	{ EIO, 0, "exists but the GPU failed to initialize in the kernel", FIX_GPU_INIT },
	/* nv.c answers an open of a lost GPU, or of a minor it does not know,
	 * with -ENODEV (tracer/decode/ABI.md §8; failure catalog Part C, G10) */
	{ ENODEV, CT_NODE_GPU,
	  "has no GPU behind it: the GPU is lost (fallen off the bus, NV_ERR_GPU_IS_LOST) "
	  "or the driver does not know this minor",
	  "check 'dmesg | grep -E \"fallen off the bus|Xid\"' and 'nvidia-smi -L'; reset the GPU (sudo nvidia-smi "
	  "-r -i N) or reboot; a stale node (the GPU was removed): recreate the nodes with nvidia-modprobe" },
	{ 0, 0, "could not be opened", NULL },
};

static void device_node_text(const struct fact *f, struct ct_verdict *v)
{
	const char *en = ct_errno_name(f->code);
	const struct node_fault *r = node_faults;

	while ((r->err && r->err != f->code) || (r->kind && r->kind != f->node_kind))
		r++;
	snprintf(v->summary, sizeof v->summary, "open(%s) failed with %s: %s %s", f->path, en ? en : "?",
		 node_label(f->node_kind), r->what);
	if (r->fix)
		snprintf(v->fix, sizeof v->fix, "%s", r->fix);
	else
		snprintf(v->fix, sizeof v->fix, "check the node (ls -l %s) and the kernel log (dmesg)", f->path);
}

/* ---- texts: the resource manager and UVM --------------------------------------------- */
#define FIX_FABRIC "the NVLink fabric is not ready: install and start nvidia-fabricmanager matching the driver version"
#define FIX_GPU_LOST "the GPU fell off the bus or needs a reset: check dmesg (Xid), reset the GPU"

/* a failing RM or UVM ioctl: the first row of its kind whose needle is in
 * the call's description (the escape, command and status names) */
static const struct rm_fault {
	bool uvm;
	const char *needle;       /* NULL: any */
	const char *fix;
	const char *what;    /* said after the call, NULL nothing */
	const char *needle2; /* must be in the call's description too, NULL any */
} rm_faults[] = {
	{ true, "UVM_INITIALIZE",
	  "nvidia-uvm refused to initialize: reload it (rmmod nvidia_uvm && modprobe nvidia_uvm), e.g. after "
	  "suspend/resume, and check dmesg",
	  NULL, NULL },
	{ true, "UVM_REGISTER_GPU",
	  "nvidia-uvm could not register the GPU: with the open kernel modules and HMM (EL9+, Blackwell) set "
	  "'options nvidia_uvm uvm_disable_hmm=1' and reboot; also check dmesg and free host memory",
	  NULL, NULL },
	{ true, NULL, "check dmesg for nvidia-uvm messages; reloading nvidia_uvm often helps", NULL, NULL },
	{ false, "INSUFFICIENT_PERMISSIONS",
	  "the driver refused for lack of privilege: check the nvidia-caps nodes and MIG permissions "
	  "(/proc/driver/nvidia/capabilities) and that the container got them",
	  NULL, NULL },
	{ false, "IN_USE",
	  "the GPU is held by another process or in EXCLUSIVE_PROCESS compute mode (nvidia-smi -q | grep "
	  "'Compute Mode'): free it, or 'nvidia-smi -c DEFAULT'",
	  NULL, NULL },
	{ false, "FABRIC", FIX_FABRIC, NULL, NULL },
	{ false, "NVLINK", FIX_FABRIC, NULL, NULL },
	{ false, "GPU_IS_LOST", FIX_GPU_LOST, "the GPU is lost (it fell off the bus, failure catalog G10)",
	  NULL },
	{ false, "RESET_REQUIRED", FIX_GPU_LOST, NULL, NULL },
	{ false, "CARD_INFO", "the kernel driver could not list the GPUs: check dmesg and 'nvidia-smi -L'",
	  NULL, NULL },
	/* confidential computing: the GPU-ready state is not set, so the
	 * kernel refuses user-mode secure channels (kernel_channel.c; catalog
	 * Part C, G8; NVIDIA/nvtrust#56) */
	{ false, "NOT_READY",
	  "in confidential-computing mode the GPU accepts work only once it is set ready: "
	  "'nvidia-smi conf-compute -srs 1' (after attestation), and check 'nvidia-smi conf-compute -f'",
	  "the GPU is not ready for work (confidential computing: the ready state is not set)", "CHANNEL" },
	{ false, NULL, "check the kernel log (dmesg, 'NVRM:' lines) for the driver's reason", NULL, NULL },
};

static void rm_text(const struct fact *f, struct ct_verdict *v, bool uvm)
{
	const struct rm_fault *r = rm_faults;

	while (r->uvm != uvm || (r->needle && !ct_diag_has(f->what, r->needle)) ||
	       (r->needle2 && !ct_diag_has(f->what, r->needle2)))
		r++;
	snprintf(v->summary, sizeof v->summary, "%s %s", uvm ? "the unified-memory driver failed:" :
		 "the kernel driver's resource manager failed:", f->what);
	if (r->what)
		ct_appendf(v->summary, sizeof v->summary, ": %s", r->what);
	snprintf(v->fix, sizeof v->fix, "%s", r->fix);
}

/* ---- a stale user-space driver: how the loader found it, what would match -------------- */
enum how_kind {
	HOW_UNKNOWN,
	HOW_ABSPATH,
	HOW_LDPATH,
	HOW_SYSTEM,
	HOW_OTHER
};
struct how {
	enum how_kind kind;
	char dir[256];  /* the directory it was found in (the LD_LIBRARY_PATH entry as written) */
	char text[400]; /* "LD_LIBRARY_PATH entry /x (1 of 2)" */
};

/* the trace was written on this machine: its files may be looked at */
static bool same_host(const struct ct_diag *d)
{
	struct utsname u;
	char host[64];

	return uname(&u) == 0 && ct_trace_ctx_str(d->t, CT_CTX_HOST, 0, host, sizeof host) &&
	       !strcmp(host, u.nodename);
}

static void dir_of(const char *path, char *buf, size_t len)
{
	const char *sl = strrchr(path, '/');

	snprintf(buf, len, "%.*s", sl ? (int)(sl - path) : 0, path);
	if (!buf[0] && sl)
		snprintf(buf, len, "/");
}

static bool system_dir(const char *dir)
{
	static const char *const dirs[] = { "/lib",
					    "/lib64",
					    "/usr/lib",
					    "/usr/lib64",
					    "/lib/x86_64-linux-gnu",
					    "/usr/lib/x86_64-linux-gnu",
					    "/lib/aarch64-linux-gnu",
					    "/usr/lib/aarch64-linux-gnu",
					    NULL };
	for (int i = 0; dirs[i]; i++)
		if (!strcmp(dir, dirs[i]))
			return true;
	return false;
}

/* the ld.so.conf file that lists dir (one level of include: ld.so.conf.d) */
static bool ldconf_lists(const char *dir, char *file, size_t flen)
{
	glob_t g;
	bool found = false;

	if (glob("/etc/ld.so.conf.d/*.conf", 0, NULL, &g) != 0)
		g.gl_pathc = 0;
	for (size_t i = 0; i <= g.gl_pathc && !found; i++) {
		const char *path = i < g.gl_pathc ? g.gl_pathv[i] : "/etc/ld.so.conf";
		char line[512];
		FILE *f = fopen(path, "r");
		while (f && !found && fgets(line, sizeof line, f)) {
			line[strcspn(line, "\r\n#")] = 0;
			size_t n = strlen(line);
			while (n > 1 && (line[n - 1] == '/' || line[n - 1] == ' '))
				line[--n] = 0;
			if (!strcmp(line, dir)) {
				found = true;
				snprintf(file, flen, "%s", path);
			}
		}
		if (f)
			fclose(f);
	}
	if (g.gl_pathc)
		globfree(&g);
	return found;
}

/* one user-space driver library as the loader found it: libcuda or libnvidia-ml */
struct lib_ref {
	const char *stem; /* "libcuda", "libnvidia-ml" */
	const char *path; /* what the loader picked (real path) */
	const char *req;  /* the name dlopen was asked for */
	const char *ver;  /* the version in its file name */
};

static struct lib_ref cuda_ref(const struct ct_diag *d)
{
	return (struct lib_ref){ "libcuda", d->cuda_path, d->cuda_req, d->cuda_ver };
}

static void loader_how(const struct ct_diag *d, const struct lib_ref *l, struct how *h)
{
	char ldp[1024], real[PATH_MAX], cand[PATH_MAX], file[256];
	const char *base = strrchr(l->req, '/') ? strrchr(l->req, '/') + 1 : l->req;
	bool here = same_host(d);
	int n = 0, total = 0;

	memset(h, 0, sizeof *h);
	if (!l->path[0]) {
		snprintf(h->text, sizeof h->text, "no dlopen of it was recorded (linked by the program)");
		return;
	}
	dir_of(l->path, h->dir, sizeof h->dir);
	if (strchr(l->req, '/')) {
		h->kind = HOW_ABSPATH;
		snprintf(h->text, sizeof h->text, "a dlopen by absolute path (\"%s\")", l->req);
		return;
	}
	if (ct_trace_env(d->t, "LD_LIBRARY_PATH", ldp, sizeof ldp) && ldp[0]) {
		for (const char *p = ldp; *p; p += strcspn(p, ":") + (p[strcspn(p, ":")] == ':'))
			total++;
		for (const char *p = ldp; *p && !h->kind;
		     p += strcspn(p, ":") + (p[strcspn(p, ":")] == ':')) {
			size_t len = strcspn(p, ":");
			char e[512];
			n++;
			snprintf(e, sizeof e, "%.*s", (int)len, p);
			while (strlen(e) > 1 && e[strlen(e) - 1] == '/')
				e[strlen(e) - 1] = 0;
			snprintf(cand, sizeof cand, "%s/%s", e, base);
			if (!strcmp(e, h->dir) ||
			    (here && e[0] && realpath(cand, real) && !strcmp(real, l->path))) {
				h->kind = HOW_LDPATH;
				snprintf(h->dir, sizeof h->dir, "%s", e);
				snprintf(h->text, sizeof h->text, "LD_LIBRARY_PATH entry %s (%d of %d)", e, n,
					 total);
			}
		}
		if (h->kind)
			return;
	}
	if (system_dir(h->dir)) {
		h->kind = HOW_SYSTEM;
		snprintf(h->text, sizeof h->text, "ld.so.cache (%s is a default library directory)", h->dir);
	} else if (here && ldconf_lists(h->dir, file, sizeof file)) {
		h->kind = HOW_SYSTEM;
		snprintf(h->text, sizeof h->text, "ld.so.cache (%s is listed in %s)", h->dir, file);
	} else {
		h->kind = HOW_OTHER;
		snprintf(h->text, sizeof h->text,
			 "neither LD_LIBRARY_PATH nor a system directory: the program's RUNPATH/RPATH or an "
			 "ld.so.conf entry (%s)",
			 h->dir);
	}
}

/* STEM.so.KVER elsewhere on this machine's library path, or where drivers install it */
static bool find_matching(const struct ct_diag *d, const char *stem, const char *kver, const char *not_dir,
			  char *out, size_t len)
{
	static const char *const dirs[] = { "/usr/lib/x86_64-linux-gnu",
					    "/usr/lib64",
					    "/usr/lib",
					    "/usr/local/nvidia/lib64",
					    "/usr/lib/x86_64-linux-gnu/nvidia/current",
					    "/usr/lib64/nvidia",
					    "/usr/lib/nvidia",
					    "/usr/lib/aarch64-linux-gnu",
					    NULL };
	char path[PATH_MAX], ldp[1024];
	struct stat st;

	if (!kver[0] || !same_host(d))
		return false;
	for (int i = 0; dirs[i]; i++) {
		snprintf(path, sizeof path, "%s/%s.so.%s", dirs[i], stem, kver);
		if (strcmp(dirs[i], not_dir) && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
			snprintf(out, len, "%s", path);
			return true;
		}
	}
	if (ct_trace_env(d->t, "LD_LIBRARY_PATH", ldp, sizeof ldp))
		for (char *e = strtok(ldp, ":"); e; e = strtok(NULL, ":")) {
			snprintf(path, sizeof path, "%s/%s.so.%s", e, stem, kver);
			if (strcmp(e, not_dir) && stat(path, &st) == 0 && S_ISREG(st.st_mode)) {
				snprintf(out, len, "%s", path);
				return true;
			}
		}
	return false;
}

/*
 * The fix for a libcuda of another version than the kernel module: where
 * it came from decides.  "Reboot / reload" only when the evidence says the
 * packages were upgraded under a running module: libcuda newer than the
 * module and installed system-wide.
 */
static void stale_fix(const struct ct_diag *d, const struct lib_ref *l, const char *kver, const struct how *h,
		      char *fix, size_t len)
{
	char match[PATH_MAX] = "", shadow[PATH_MAX + 80];
	bool newer = l->ver[0] && ct_version_cmp(l->ver, kver) > 0;

	if (find_matching(d, l->stem, kver, h->dir, match, sizeof match))
		snprintf(shadow, sizeof shadow, "it shadows %s, which matches the kernel module", match);
	else
		snprintf(shadow, sizeof shadow, "the driver's own %s.so.%s must be found instead (%s)",
			 l->stem, kver,
			 same_host(d)
				 ? "not found in the usual directories here: install the user-space driver "
				   "of the module's version"
				 : "look for it on the machine that ran the program");
	switch (h->kind) {
	case HOW_SYSTEM:
		if (newer) {
			snprintf(fix, len,
				 "the driver's user-space libraries (%s %s in %s) were upgraded under the running "
				 "kernel module %s: reboot, or unload and reload the nvidia modules, so that the module "
				 "matches",
				 l->stem, l->ver, h->dir, kver);
			break;
		}
		snprintf(fix, len,
			 "remove the stale %s %s from %s (%s.so.%s and its %s.so.1 link) and run "
			 "ldconfig: %s; or reinstall the user-space driver %s",
			 l->stem, l->ver, h->dir, l->stem, l->ver[0] ? l->ver : "*", l->stem, shadow, kver);
		break;
	case HOW_LDPATH: snprintf(fix, len, "remove %s from LD_LIBRARY_PATH: %s", h->dir, shadow); break;
	case HOW_ABSPATH:
		snprintf(fix, len, "the program loads %s by absolute path: load %s.so.1 by name instead; %s",
			 l->req, l->stem, shadow);
		break;
	case HOW_OTHER:
		snprintf(fix, len, "take %s off the program's RUNPATH/RPATH (or the ld.so.conf entry): %s",
			 h->dir, shadow);
		break;
	default:
		snprintf(fix, len, "the %s the program loaded is not the kernel module's version %s: %s",
			 l->stem, kver, shadow);
	}
}

/* a real (not injected) difference of libcuda's file-name version and the module's */
static bool stale_evidence(const struct ct_diag *d, const struct ct_verdict *v)
{
	return d->cuda_ver[0] && v->contract.kernel_version[0] && !d->cuda_compat && !d->cuda_stub &&
	       ct_version_cmp(d->cuda_ver, v->contract.kernel_version) != 0;
}

/* ---- texts: the version handshake ---------------------------------------------------- */
#define FIX_SAME_VERSION                                                                           \
	"user-space driver libraries and the loaded kernel module must be the same version: reboot " \
	"(or reload the nvidia modules) after a driver upgrade, or remove a stale libcuda"

static void handshake_text(struct ct_diag *d, const struct fact *f, struct ct_verdict *v)
{
	char client[64] = "", kernel[64] = "", src[32] = "";
	const char *p = f->what, *bar = strchr(p, '|');

	/* the fact's what: CLIENT|KERNEL|SOURCE (facts.c, on_ioctl) */
	if (bar) {
		snprintf(client, sizeof client, "%.*s", (int)(bar - p), p);
		p = bar + 1;
		bar = strchr(p, '|');
		if (bar) {
			snprintf(kernel, sizeof kernel, "%.*s", (int)(bar - p), p);
			snprintf(src, sizeof src, "%s", bar + 1);
		}
	}
	if (!strcmp(src, "CHECK_VERSION_STR")) {
		snprintf(v->summary, sizeof v->summary,
			 "the user-space driver (version %s) and the kernel module (version %s) disagree: "
			 "NV_ESC_CHECK_VERSION_STR was rejected (NVML says 'Driver/library version mismatch')",
			 client, kernel);
	} else {
		snprintf(v->summary, sizeof v->summary,
			 "%s %s is version %s but the kernel module is %s (GET_BUILD_VERSION)",
			 d->cuda_compat ? "the cuda-compat libcuda" : "libcuda", d->cuda_path[0] ? d->cuda_path : "",
			 client[0] && strcmp(client, "?") ? client : d->cuda_ver, kernel);
	}
	if (d->cuda_compat)
		snprintf(v->fix, sizeof v->fix,
			 "a cuda-compat libcuda must be newer than the kernel driver: remove %.*s from LD_LIBRARY_PATH "
			 "(the host driver already supports this CUDA) or install a matching cuda-compat package",
			 (int)(strrchr(d->cuda_path, '/') ? strrchr(d->cuda_path, '/') - d->cuda_path : 0), d->cuda_path);
	else if (!f->s.injected && stale_evidence(d, v) && strcmp(src, "CHECK_VERSION_STR")) {
		struct how h;
		struct lib_ref l = cuda_ref(d);
		loader_how(d, &l, &h);
		ct_appendf(v->summary, sizeof v->summary, "; the loader found it through %s", h.text);
		stale_fix(d, &l, v->contract.kernel_version, &h, v->fix, sizeof v->fix);
	} else if (!f->s.injected && !strcmp(src, "CHECK_VERSION_STR") && d->nvml_path[0] && d->nvml_ver[0] &&
		   kernel[0] && ct_version_cmp(d->nvml_ver, kernel) != 0 &&
		   !ct_diag_has(d->nvml_path, "/compat/")) {
		/* NVML's own library: name it and how the loader found it */
		struct how h;
		struct lib_ref l = { "libnvidia-ml", d->nvml_path, d->nvml_req, d->nvml_ver };
		loader_how(d, &l, &h);
		ct_appendf(v->summary, sizeof v->summary, "; libnvidia-ml %s (%s) was found through %s",
			   d->nvml_ver, d->nvml_path, h.text);
		stale_fix(d, &l, kernel, &h, v->fix, sizeof v->fix);
	} else
		snprintf(v->fix, sizeof v->fix, "%s/libnvidia-ml from LD_LIBRARY_PATH", FIX_SAME_VERSION);
}

/* ---- texts: driver API codes with no lower cause ------------------------------------- */
/* which entry of CUDA_VISIBLE_DEVICES ended the list, and why (selectors.h);
 * false when the parse finds nothing wrong it can name */
static bool cvd_reason(const struct ct_diag *d, int ngpus, bool none_visible, char *buf, size_t len,
		       char *fix, size_t flen)
{
	struct ct_sel sel;
	const char *first;
	const char *uuids[32];

	/* the UUIDs RM answered libcuda: GPU- entries are checked when every GPU's is known */
	for (int i = 0; i < d->n_gpu_uuid; i++)
		uuids[i] = d->gpu_uuid[i];
	ct_sel_cuda(d->cvd, ngpus, uuids, d->n_gpu_uuid, &sel);
	if (sel.stop == CT_SEL_EMPTY)
		return false;
	if (sel.stop != CT_SEL_END) {
		snprintf(buf, len, "entry %d '%s' %s%s", sel.stop_at, sel.stop_tok,
			 ct_sel_stop_text(sel.stop),
			 sel.stop == CT_SEL_DUPLICATE ? ""
			 : sel.stop_at                ? " and ends the list there"
						      : ", so the list is empty");
		if (sel.stop == CT_SEL_RANGE && ngpus > 0)
			ct_appendf(buf, len, " (the driver sees %d GPU(s): indices 0..%d)", ngpus, ngpus - 1);
		if (sel.stop == CT_SEL_UUID || sel.stop == CT_SEL_AMBIGUOUS) {
			/* the UUIDs the driver answered (the trace's GID_INFO / UUID_FROM_GPU_ID) */
			ct_appendf(buf, len, " (the driver's GPU(s): ");
			for (int i = 0; i < d->n_gpu_uuid && i < 4; i++)
				ct_appendf(buf, len, "%s%s", i ? ", " : "", d->gpu_uuid[i]);
			ct_appendf(buf, len, "%s)", d->n_gpu_uuid > 4 ? ", ..." : "");
		}
		snprintf(fix, flen, "%s",
			 sel.stop == CT_SEL_DUPLICATE ? "name each GPU once in CUDA_VISIBLE_DEVICES"
			 : sel.stop == CT_SEL_RANGE
				 ? "use indices below the GPU count (nvidia-smi -L), or GPU UUIDs"
			 : sel.stop == CT_SEL_UUID || sel.stop == CT_SEL_AMBIGUOUS
				 ? "copy the UUID from 'nvidia-smi -L' (GPU-..., or a prefix only one GPU has)"
				 : "use GPU indices or UUIDs as 'nvidia-smi -L' prints them; an entry "
				   "that is neither ends the list");
		return true;
	}
	/* every entry parsed; the UUIDs could not be checked here (the trace
	 * holds no GPU's UUID): with nothing visible, the first one is what
	 * CUDA could not find */
	if (!none_visible)
		return false;
	first = d->cvd;
	while (*first == ' ')
		first++;
	if (!strncasecmp(first, "MIG-", 4)) {
		snprintf(buf, len,
			 "entry 0 '%.*s' is a MIG device, and no MIG device with that UUID is visible "
			 "(MIG mode off, a MIG UUID of another GPU, or the capability nodes /dev/nvidia-caps "
			 "missing)",
			 (int)strcspn(first, ","), first);
		snprintf(fix, flen,
			 "list the MIG devices with 'nvidia-smi -L' and pass their MIG- UUIDs; in a "
			 "container pass /dev/nvidia-caps too");
		return true;
	}
	if (!strncasecmp(first, "GPU-", 4)) {
		snprintf(buf, len, "entry 0 '%.*s' matches no GPU's UUID (or, as a prefix, more than one)",
			 (int)strcspn(first, ","), first);
		snprintf(fix, flen,
			 "copy the UUID from 'nvidia-smi -L' (GPU-..., or a prefix only one GPU has)");
		return true;
	}
	return false;
}

static void explain_no_device(struct judge *j, const struct fact *f)
{
	struct ct_diag *d = j->d;
	struct ct_verdict *v = j->v;

	if (d->cvd_set && d->cards > 0) {
		char why[400], fix[200];
		snprintf(v->summary, sizeof v->summary,
			 "CUDA_VISIBLE_DEVICES='%s' hides all %d GPU(s) the driver sees: %s = %d (no device)",
			 d->cvd, d->cards, f->s.call, f->code);
		snprintf(v->fix, sizeof v->fix, "set CUDA_VISIBLE_DEVICES to existing GPU indices or UUIDs "
			 "(nvidia-smi -L), or unset it");
		if (cvd_reason(d, d->cards, true, why, sizeof why, fix, sizeof fix)) {
			ct_appendf(v->summary, sizeof v->summary, "; %s", why);
			snprintf(v->fix, sizeof v->fix, "%s", fix);
		}
	} else {
		snprintf(v->summary, sizeof v->summary, "%s = %d: no CUDA device is visible%s%s", f->s.call, f->code,
			 d->cvd_set ? "; CUDA_VISIBLE_DEVICES=" : "", d->cvd_set ? d->cvd : "");
		snprintf(v->fix, sizeof v->fix, "check NVIDIA_VISIBLE_DEVICES / CUDA_VISIBLE_DEVICES and that the "
			 "container got a GPU");
	}
}

static void explain_invalid_device(struct judge *j, const struct fact *f)
{
	struct ct_diag *d = j->d;
	struct ct_verdict *v = j->v;

	snprintf(v->summary, sizeof v->summary, "%s asked for a device that does not exist (invalid device "
		 "ordinal)%s", f->s.call, d->devcount_seen ? "; devices visible: " : "");
	if (d->devcount_seen)
		ct_appendf(v->summary, sizeof v->summary, "%d", d->dev_count);
	if (d->cvd_set) {
		char why[400], fix[200];
		ct_appendf(v->summary, sizeof v->summary, " (CUDA_VISIBLE_DEVICES=%s renumbers them from 0)",
			   d->cvd);
		/* a list cut short by an invalid entry shows fewer devices than it names */
		if (d->cards > 0 && cvd_reason(d, d->cards, false, why, sizeof why, fix, sizeof fix))
			ct_appendf(v->summary, sizeof v->summary, "; %s", why);
	}
	snprintf(v->fix, sizeof v->fix, "use an ordinal below the visible device count; CUDA_VISIBLE_DEVICES "
		 "renumbers the devices it keeps from 0");
}

/* a driver code and what it means when nothing lower failed: explain()
 * when the text needs facts, else "CALL = CODE" + what, and fix */
static const struct api_code {
	int code;
	void (*explain)(struct judge *j, const struct fact *f);
	const char *what;
	const char *fix;
} api_codes[] = {
	{ CT_CUDA_ERROR_NO_DEVICE, explain_no_device, NULL, NULL },
	{ CT_CUDA_ERROR_INVALID_DEVICE, explain_invalid_device, NULL, NULL },
	{ CT_CUDA_ERROR_SYSTEM_NOT_READY, NULL,
	  ": the system is not ready (on NVSwitch systems the fabric manager has not configured the fabric)",
	  "install nvidia-fabricmanager of exactly the driver's version and 'systemctl enable --now "
	  "nvidia-fabricmanager'; reset the GPUs if it was restarted" },
	{ CT_CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE, NULL,
	  ": forward compatibility was attempted on a GPU that does not support it",
	  "remove the cuda-compat directory from LD_LIBRARY_PATH on this GPU" },
	{ CT_CUDA_ERROR_DEVICE_UNAVAILABLE, NULL, ": all CUDA devices are busy or unavailable",
	  "the GPU is in EXCLUSIVE_PROCESS/PROHIBITED compute mode or held by another process: nvidia-smi -q | "
	  "grep 'Compute Mode'; 'nvidia-smi -c DEFAULT' or free it" },
	{ CT_CUDA_ERROR_NOT_INITIALIZED, NULL, " (initialization error) with no failing driver step recorded",
	  "a CUDA context inherited across fork() cannot be used: use the 'spawn' start method; with open "
	  "kernel modules try 'options nvidia_uvm uvm_disable_hmm=1'" },
};

/* ---- the contract, identity ------------------------------------------------------------ */
static void contract(struct ct_diag *d, struct ct_verdict *v)
{
	char kv[32] = "", buf[32], buf2[32];
	uint32_t k = d->drv;
	int drv_cuda;

	/* print as the module does (580.159.04): minor is not zero padded */
	if (k)
		snprintf(kv, sizeof kv, "%u.%u.%02u", k / 1000000, k / 1000 % 1000, k % 1000);
	snprintf(v->contract.kernel_version, sizeof v->contract.kernel_version, "%s", d->hs_kernel[0] ? d->hs_kernel : kv);
	snprintf(v->contract.libcuda_version, sizeof v->contract.libcuda_version, "%s", d->cuda_ver);
	snprintf(v->contract.libcuda_path, sizeof v->contract.libcuda_path, "%s", d->cuda_path);
	v->contract.libcuda_kind = !d->cuda_loaded ? (d->cuda_load_fail.s.set ? "not loaded" : "unknown")
				 : d->cuda_stub ? "stub" : d->cuda_compat ? "compat" : "host";
	v->contract.runtime_version = d->rt_version;
	v->contract.runtime_from = d->rt_version ? "cudaRuntimeGetVersion" : NULL;
	if (!v->contract.runtime_version && d->cudart_ver) {
		v->contract.runtime_version = d->cudart_ver;
		v->contract.runtime_from = "libcudart file name";
	}
	if (!v->contract.runtime_version && d->gpa_max_ver >= 10000) {
		v->contract.runtime_version = d->gpa_max_ver;
		v->contract.runtime_from = "cuGetProcAddress cudaVersion";
	}
	v->contract.driver_version = d->drv_version ? d->drv_version : d->rt_drv_version;
	drv_cuda = v->contract.driver_version;
	if (!drv_cuda && v->contract.kernel_version[0])
		drv_cuda = ct_driver_cuda_version(v->contract.kernel_version);
	ct_compat_classify(drv_cuda, v->contract.runtime_version, d->cuda_compat, &v->contract.compat);
	if (v->contract.compat.cls == CT_COMPAT_UNKNOWN)
		snprintf(v->contract.rule_text, sizeof v->contract.rule_text,
			 "not classified: %s", !v->contract.runtime_version ? "no runtime version recorded"
					       : "no driver version recorded");
	else
		snprintf(v->contract.rule_text, sizeof v->contract.rule_text, "%s: %s (driver CUDA %s, runtime CUDA %s%s%s)",
			 v->contract.compat.name, v->contract.compat.rule,
			 ct_cuda_version_str(drv_cuda, buf, sizeof buf),
			 ct_cuda_version_str(v->contract.runtime_version, buf2, sizeof buf2),
			 v->contract.runtime_from ? ", from " : "", v->contract.runtime_from ? v->contract.runtime_from : "");
}

static int rank_of(struct ct_trace *t)
{
	static const char *const vars[] = { "RANK", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", "PMI_RANK",
					    "LOCAL_RANK", NULL };
	char buf[64];

	for (int i = 0; vars[i]; i++)
		if (ct_trace_env(t, vars[i], buf, sizeof buf) && buf[0]) {
			char *end;
			long r = strtol(buf, &end, 10);
			if (!*end && r >= 0)
				return (int)r;
		}
	return -1;
}

static const char *basename_of(const char *p)
{
	const char *b = strrchr(p, '/');
	return b ? b + 1 : p;
}

/* the code's name in the family of the call that returned it */
static const char *code_name(const struct ct_diag_step *s, int code, char *buf, size_t len)
{
	const char *n = NULL;
	int fam = 0;

	for (unsigned c = 1; c < CT_CALL__MAX; c++)
		if (!strcmp(ct_call_name(c), s->call)) {
			fam = ct_call_family(c);
			break;
		}
	if (fam == CT_FAM_DRIVER)
		n = ct_cu_result_name(code);
	else if (fam == CT_FAM_RUNTIME)
		n = ct_cudart_error_name(code);
	else if (fam == CT_FAM_NVML)
		n = ct_nvml_return_name(code);
	snprintf(buf, len, "%s", n ? n : "");
	return buf;
}

/* what the program saw: the runtime's answer when there is one, else the driver's */
static const struct fact *final_error(const struct ct_diag *d)
{
	if (d->rt_fail.s.set)
		return &d->rt_fail;
	if (d->cuinit.s.set && d->cuinit.code)
		return &d->cuinit;
	if (d->ctx_fail.s.set)
		return &d->ctx_fail;
	if (d->devget_fail.s.set)
		return &d->devget_fail;
	if (d->devcount_fail.s.set)
		return &d->devcount_fail;
	if (d->nvml_fail.s.set)
		return &d->nvml_fail;
	if (d->cuda_load_fail.s.set && !d->cuda_loaded && !d->cuinit_seen)
		return &d->cuda_load_fail;
	/* NVML that could not be loaded is the failure when nothing else is:
	 * a process that initialized CUDA only probed for it (a note, ct_diag_end) */
	if (d->nvml_load_fail.s.set && !d->nvml_loaded && !d->cuinit_seen)
		return &d->nvml_load_fail;
	return NULL;
}

/* when cudart failed because a driver call under it did, the driver call */
static const struct fact *failed_call(const struct ct_diag *d, const struct fact *final)
{
	const struct fact *lower;

	if (final != &d->rt_fail)
		return final;
	lower = d->cuinit.s.set && d->cuinit.code ? &d->cuinit
	      : d->ctx_fail.s.set ? &d->ctx_fail
	      : d->devget_fail.s.set ? &d->devget_fail : NULL;
	return lower && lower->s.t_ns <= final->s.end_ns ? lower : final;
}

/* ---- hangs ------------------------------------------------------------------------------ */
/* "ioctl(nvidia-uvm, UVM_REGISTER_GPU) never returned" -> "ioctl(nvidia-uvm, UVM_REGISTER_GPU)" */
static const char *call_text(const struct ct_diag_step *s, char *buf, size_t len)
{
	static const char tail[] = " never returned";
	size_t n = strlen(s->text), t = sizeof tail - 1;

	if (n > t && !strcmp(s->text + n - t, tail))
		n -= t;
	snprintf(buf, len, "%.*s", (int)n, s->text);
	return buf;
}

/*
 * A delay= rule that may have held this call: the shim marks the enter
 * record of a delayed call (then step->injected is set); traces written
 * before it did only name the rules in force.  A rule counts when it covers
 * the held call, or (with a delay of a second or more) an open/ioctl under a
 * driver or runtime call that was held with nothing recorded inside it.
 */
static bool delay_rule_for(struct ct_diag *d, const struct ct_diag_step *s, char *rule, size_t len)
{
	char spec[1024], err[160];
	struct ct_rule *r;
	int n, call = 0, fam;
	bool hit = false;

	if (!ct_trace_ctx_str(d->t, CT_CTX_INJECT, 0, spec, sizeof spec))
		return false;
	for (unsigned c = 1; c < CT_CALL__MAX; c++)
		if (!strcmp(ct_call_name(c), s->call))
			call = (int)c;
	/* rules cover calls by a 64-bit mask */
	if (!call || call >= 64 || !(r = calloc(CT_RULES_MAX, sizeof *r)))
		return false;
	fam = ct_call_family((unsigned)call);
	n = ct_rules_parse(spec, r, CT_RULES_MAX, err, sizeof err);
	for (int i = 0; i < n && !hit; i++) {
		if (!r[i].delay_ns)
			continue;
		/* under a driver call, only a delay long enough to look like a hang */
		if ((r[i].calls & (1ull << call)) ||
		    ((fam == CT_FAM_DRIVER || fam == CT_FAM_RUNTIME || fam == CT_FAM_NVML) &&
		     r[i].delay_ns >= 1000000000ull &&
		     (r[i].calls & ((1ull << CT_CALL_ioctl) | (1ull << CT_CALL_open) | (1ull << CT_CALL_openat))))) {
			hit = true;
			/* the rule's text: the i-th ';'-separated part */
			const char *p = spec;
			for (int k = 0; k < i && p; k++)
				if ((p = strchr(p, ';')))
					p++;
			while (p && *p == ' ')
				p++;
			snprintf(rule, len, "%.*s", p ? (int)strcspn(p, ";") : 0, p ? p : "");
		}
	}
	free(r);
	return hit;
}

/* how the process ended: what the caller knows (cutrace run waited for it,
 * or killed it at its --timeout), else what the shim recorded */
static void process_end(struct ct_diag *d, const struct cutrace_header *h, struct ct_verdict *v)
{
	v->end = d->end_hint;
	if (v->end.kind == CT_END_UNKNOWN && (h->flags & CT_HF_EXIT_STATUS)) {
		/* the shim's exit handler (format 1.2) */
		v->end.kind = CT_END_EXIT;
		v->end.code = (int)(h->exit_status & 0xffu);
		v->end.at_mono_ns = h->exit_ns;
	} else if (v->end.kind == CT_END_UNKNOWN && (h->flags & CT_HF_EXITED)) {
		v->end.kind = CT_END_EXITED;
	}
	v->end_rel_ns = UINT64_MAX;
	if (v->end.at_mono_ns && d->have_t0 && v->end.at_mono_ns >= d->t0)
		v->end_rel_ns = v->end.at_mono_ns - d->t0;
}

/* ---- the rules, in order ------------------------------------------------------------------ */
/* a call that never returned, with nothing failing before it: a hang or a crash in it */
static bool rule_hang(struct judge *j)
{
	struct ct_diag *d = j->d;
	struct ct_verdict *v = j->v;
	const struct fact *io = d->unfinished_io.s.set ? &d->unfinished_io : NULL;
	const struct fact *drv = d->unfinished.s.set ? &d->unfinished : NULL;
	const struct fact *ld = d->unfinished_ld.s.set ? &d->unfinished_ld : NULL;
	const struct fact *all[] = { drv, ld, io };
	const struct fact *inner, *outer;
	char in_text[360], out_text[360], rule[200] = "";
	bool exited = j->h->flags & CT_HF_EXITED;

	if (j->final || (!io && !drv && !ld))
		return false;
	/* the innermost held call is where it stopped: an open or ioctl (nothing
	 * runs inside one), else the later of a driver and a loader call; the
	 * outermost held call of that thread is the one the program made */
	if (io)
		inner = io;
	else if (drv && ld)
		inner = ld->s.seq > drv->s.seq ? ld : drv;
	else
		inner = drv ? drv : ld;
	outer = inner;
	for (int i = 0; i < 3; i++)
		if (all[i] && all[i]->s.tid == inner->s.tid && all[i]->s.seq < outer->s.seq)
			outer = all[i];
	v->ok = false;
	v->hung = true;
	v->step = inner->s;
	v->final = outer->s;
	if (inner == io)
		v->layer = inner->node_kind == CT_NODE_UVM || inner->node_kind == CT_NODE_UVM_TOOLS ? CT_LAYER_UVM
			 : strcmp(inner->s.call, "ioctl") ? CT_LAYER_DEVICE_NODE : CT_LAYER_RESOURCE_MANAGER;
	else if (inner == ld)
		v->layer = CT_LAYER_LOADER;
	else
		v->layer = CT_LAYER_DRIVER_API;
	v->injected = v->step.injected;
	/* a trace that marks delayed calls shows whether this one was held;
	 * in one that marks none (written before the shim marked them, or with
	 * the held call not recorded) a delay rule covering it is the evidence */
	if (!v->injected && !d->delay_marks && delay_rule_for(d, &v->step, rule, sizeof rule))
		v->injected = true;

	call_text(&outer->s, out_text, sizeof out_text);
	call_text(&inner->s, in_text, sizeof in_text);
	/* no times here: the step and then lines carry them, and a job-wide
	 * hang reads the same in every process (one group, stable output) */
	if (v->end.kind == CT_END_TIMEOUT) {
		/* cutrace's --timeout ended it: say how long it was given */
		snprintf(v->summary, sizeof v->summary, "%s did not return within %s", out_text,
			 v->end.limit);
		if (inner != outer)
			ct_appendf(v->summary, sizeof v->summary, ": it was inside %s", in_text);
	} else {
		snprintf(v->summary, sizeof v->summary, "%s never returned", out_text);
		if (inner != outer)
			ct_appendf(v->summary, sizeof v->summary,
				   ": it was inside %s, which did not return either", in_text);
	}
	if (v->step.injected)
		ct_appendf(v->summary, sizeof v->summary, "; an injected delay held it");
	else if (rule[0])
		ct_appendf(v->summary, sizeof v->summary,
			   "; the injection rule '%s' was in force and may have held it", rule);
	switch (v->end.kind) {
	case CT_END_TIMEOUT:
		ct_appendf(v->summary, sizeof v->summary, "; cutrace killed the process at its --timeout");
		break;
	case CT_END_SIGNAL: {
		char sig[24];
		ct_appendf(v->summary, sizeof v->summary, "; the process was killed by %s while in it",
			   ct_signal_name(v->end.code, sig, sizeof sig));
		break;
	}
	case CT_END_EXIT:
		ct_appendf(v->summary, sizeof v->summary,
			   "; the process exited (status %d) with the call still open", v->end.code);
		break;
	case CT_END_RUNNING:
		ct_appendf(v->summary, sizeof v->summary,
			   "; the process was still running in it when cutrace looked");
		break;
	default:
		ct_appendf(v->summary, sizeof v->summary, "; the process %s",
			   exited ? "exited with the call still open"
				  : "was killed or crashed (or was still running) while in it");
	}

	if (v->injected)
		snprintf(v->fix, sizeof v->fix, "this hang was produced by a cutrace delay= rule: run without it to see "
			 "the real behaviour");
	else if (inner == ld)
		snprintf(v->fix, sizeof v->fix,
			 "the dynamic loader or a constructor of the library being loaded hung or crashed: find which "
			 "with LD_DEBUG=files or gdb (a lock held across fork(), a constructor that waits on a thread, "
			 "a crash in the library's initializer)");
	else
		snprintf(v->fix, sizeof v->fix,
			 "a hang inside the driver: look at dmesg (Xid, NVRM), check the GPU with nvidia-smi, and for "
			 "NVSwitch systems the fabric manager; a crash: run with core dumps enabled");
	return true;
}

/* nothing failed */
static bool rule_healthy(struct judge *j)
{
	struct ct_diag *d = j->d;
	struct ct_verdict *v = j->v;

	if (j->final)
		return false;
	v->ok = true;
	v->layer = CT_LAYER_NONE;
	if (d->cuinit_seen)
		snprintf(v->summary, sizeof v->summary, "CUDA initialized: cuInit succeeded%s%s",
			 d->devcount_seen ? ", devices: " : "", "");
	else if (d->cuda_loaded)
		snprintf(v->summary, sizeof v->summary, "libcuda loaded (%s); no failing CUDA call", d->cuda_path);
	else
		snprintf(v->summary, sizeof v->summary, "no failing CUDA call recorded");
	if (d->devcount_seen)
		ct_appendf(v->summary, sizeof v->summary, "%d", d->dev_count);
	/* it worked, but slowly: say how slowly (a probe that took 100 s is news) */
	if (v->slow_call[0] && ct_stable()) /* --no-time: that it was slow, not how slow */
		ct_appendf(v->summary, sizeof v->summary, "; slow: %s took over %llu s", v->slow_call,
			   (unsigned long long)(CT_SLOW_CALL_NS / 1000000000ull));
	else if (v->slow_call[0])
		ct_appendf(v->summary, sizeof v->summary, "; slow: %s took %.3f s", v->slow_call,
			   (double)v->slow_ns / 1e9);
	/* a cut file: the failure may be in what is missing */
	if (ct_trace_incomplete(d->t))
		ct_appendf(v->summary, sizeof v->summary,
			   "%s; the file is truncated and records past its end are missing: a failure may be among "
			   "them",
			   d->cuinit_seen || d->cuda_loaded ? "" : " among the records intact");
	return true;
}

/* the loader: NVML could not be loaded, and nothing else failed */
static bool rule_nvml_not_loaded(struct judge *j)
{
	struct ct_diag *d = j->d;
	struct ct_verdict *v = j->v;

	if (j->final != &d->nvml_load_fail)
		return false;
	j->root = j->final;
	v->layer = CT_LAYER_LOADER;
	v->step = j->root->s;
	snprintf(v->summary, sizeof v->summary, "the NVML library %s could not be loaded: %s%s",
		 j->root->what, d->nvml_dlerror[0] ? d->nvml_dlerror : "(no loader message)",
		 v->contract.kernel_version[0] || ct_trace_ctx_damaged(d->t)
			 ? ""
			 : "; no NVIDIA kernel module is loaded either (no /proc/driver/nvidia/version)");
	if (ct_diag_has(d->nvml_dlerror, "wrong ELF class"))
		snprintf(v->fix, sizeof v->fix, "put the 64-bit NVIDIA driver library directory first "
			 "(LD_LIBRARY_PATH, ldconfig) and remove the 32-bit one from the path");
	else
		snprintf(v->fix, sizeof v->fix,
			 "libnvidia-ml.so.1 comes with the NVIDIA driver: install the driver's user-space "
			 "libraries, or in a container enable the driver's 'utility' capability "
			 "(NVIDIA_DRIVER_CAPABILITIES=compute,utility; --gpus all with the NVIDIA runtime, or CDI) "
			 "so that it is mounted; else add its directory to the loader path");
	return true;
}

/* the loader: libcuda could not be loaded at all */
static bool rule_libcuda_not_loaded(struct judge *j)
{
	struct ct_diag *d = j->d;
	struct ct_verdict *v = j->v;
	char caps[128];

	if (d->cuda_loaded || !d->cuda_load_fail.s.set)
		return false;
	j->root = &d->cuda_load_fail;
	v->layer = CT_LAYER_LOADER;
	v->step = j->root->s;
	if (ct_diag_has(d->cuda_dlerror, "wrong ELF class")) {
		snprintf(v->summary, sizeof v->summary, "%s could not be loaded: %s (a 32-bit driver library is "
			 "first on the search path)", j->root->what, d->cuda_dlerror);
		snprintf(v->fix, sizeof v->fix, "put the 64-bit driver library directory first (LD_LIBRARY_PATH, "
			 "ldconfig) and remove the 32-bit one from the path");
		return true;
	}
	snprintf(v->summary, sizeof v->summary, "the CUDA driver library %s could not be loaded: %s%s",
		 j->root->what, d->cuda_dlerror[0] ? d->cuda_dlerror : "(no loader message)",
		 v->contract.kernel_version[0] || ct_trace_ctx_damaged(d->t)
			 ? ""
			 : "; no NVIDIA kernel module is loaded either (no /proc/driver/nvidia/version)");
	snprintf(v->fix, sizeof v->fix,
		 "run where the NVIDIA driver is installed: in a container start it with GPU access "
		 "(--gpus all / CDI / the NVIDIA runtime) so libcuda.so.1 is mounted, or add its directory "
		 "to the loader path (ldconfig, LD_LIBRARY_PATH)");
	/* a container runtime told to leave CUDA out (catalog G1, mudler/LocalAI#11973) */
	if (ct_trace_env(d->t, "NVIDIA_DRIVER_CAPABILITIES", caps, sizeof caps) && caps[0] &&
	    !strstr(caps, "compute") && !strstr(caps, "all")) {
		ct_appendf(v->summary, sizeof v->summary,
			   "; NVIDIA_DRIVER_CAPABILITIES=%s has no 'compute': the container runtime mounted the "
			   "driver's %s but not libcuda",
			   caps, d->nvml_loaded ? "NVML (loaded here)" : "other libraries");
		snprintf(v->fix, sizeof v->fix,
			 "start the container with NVIDIA_DRIVER_CAPABILITIES=compute,utility (docker run --gpus all "
			 "-e NVIDIA_DRIVER_CAPABILITIES=compute,utility ...; in Kubernetes in the container's env) so "
			 "that the runtime mounts libcuda.so.1");
	} else if (!strcmp(j->root->what, "libcuda.so") && d->ldcache_so1 == 1 && d->ldcache_so == 0) {
		/* the development name only (catalog G1, NVIDIA/nvidia-container-toolkit#944) */
		char dir[200];
		const char *sl = strrchr(d->ldcache_so1_path, '/');
		snprintf(dir, sizeof dir, "%.*s", sl ? (int)(sl - d->ldcache_so1_path) : 0,
			 d->ldcache_so1_path);
		ct_appendf(v->summary, sizeof v->summary,
			   "; ld.so.cache has libcuda.so.1 (%s) but no libcuda.so: the driver or the container "
			   "runtime provides only the versioned name, and this program asks for the development name",
			   d->ldcache_so1_path);
		snprintf(v->fix, sizeof v->fix,
			 "load libcuda.so.1 (the name the driver guarantees), or add the link in the image: "
			 "ln -s libcuda.so.1 %s/libcuda.so && ldconfig",
			 dir[0] ? dir : "/usr/lib/x86_64-linux-gnu");
	} else if (d->ldcache_so1 == 0) {
		ct_appendf(v->summary, sizeof v->summary, "; ld.so.cache has no libcuda.so.1");
	}
	if (v->final_code == CT_cudaErrorInsufficientDriver && j->final == &d->rt_fail)
		snprintf(v->hint, sizeof v->hint,
			 "cudart reports this as 35 'CUDA driver version is insufficient', but no driver "
			 "library was found at all: it is missing, not too old");
	return true;
}

/* the loader: libcuda was deleted under the running process, or comes from a
 * mount whose source is gone: a driver upgraded under a running pod (catalog
 * G4: NVIDIA/gpu-operator#416, #902) */
static bool rule_stale_driver_files(struct judge *j)
{
	struct ct_diag *d = j->d;
	struct ct_verdict *v = j->v;
	const struct fact *f = j->failed;

	if (!d->snap.s.set || !(d->cuda_deleted || d->mount_deleted) || !f)
		return false;
	v->layer = CT_LAYER_LOADER;
	v->step = d->snap.s;
	if (d->cuda_deleted)
		snprintf(v->summary, sizeof v->summary,
			 "the libcuda this process mapped (%s) was deleted from disk after it was loaded%s%s%s: the "
			 "driver was upgraded under the running process or pod; %s = %d followed",
			 d->cuda_mapped, d->cuda_mount[0] ? " (mount: " : "", d->cuda_mount,
			 d->cuda_mount[0] ? ")" : "", f->s.call, f->code);
	else
		snprintf(v->summary, sizeof v->summary,
			 "libcuda (%s) comes from a mount whose source was deleted on the host (%s): the driver was "
			 "upgraded under this pod and its view of the driver files is stale; %s = %d followed",
			 d->cuda_mapped, d->cuda_mount, f->s.call, f->code);
	snprintf(v->fix, sizeof v->fix,
		 "restart the process, and in Kubernetes the pod (kubectl delete pod POD), so that it maps the "
		 "installed driver; after a GPU-operator driver upgrade restart every GPU pod");
	return true;
}

/* a known GPU-sharing interposer answered, and no driver call under it failed
 * (catalog G5: HAMi-core's bare 'cuInit failed:100/999', Project-HAMi/HAMi#1202) */
static bool rule_interposer(struct judge *j)
{
	struct ct_diag *d = j->d;
	struct ct_verdict *v = j->v;
	const struct fact *f = j->failed;

	if (!d->interposer[0] || !f || f == &d->cuda_load_fail || f == &d->nvml_load_fail)
		return false;
	/* a failure under it is the cause (rule_low_level), the interposer a note */
	if (d->open_fail.s.set || d->rm_fail.s.set || d->uvm_fail.s.set || d->hs_mismatch.s.set ||
	    d->card_empty.s.set || d->caps_fail.s.set || d->dxg_fail.s.set)
		return false;
	v->layer = CT_LAYER_DRIVER_API;
	v->step = f->s;
	snprintf(v->summary, sizeof v->summary,
		 "%s = %d, and no driver call under it failed%s: the GPU-sharing interposer %s (%s) sits between "
		 "the program and libcuda and answered for it; its own limits or device list gave this code, "
		 "not the driver",
		 f->s.call, f->code, d->nv_ioctls ? "" : " (no NVIDIA ioctl was made at all)", d->interposer,
		 d->interposer_path);
	snprintf(v->fix, sizeof v->fix,
		 "run once without the interposer to see the driver's own answer (remove %s from LD_PRELOAD and "
		 "/etc/ld.so.preload, or for HAMi a pod without the vGPU resource); check the interposer's log "
		 "and that its release supports this driver (HAMi-core hangs or fails on 570/575)",
		 d->interposer);
	return true;
}

/* 46 on a vGPU guest whose compute mode does not explain it: the vGPU holds
 * no license (catalog G6: Azure/AKS#4870, DDMAL/Rodan#1332; nvidia-smi -q then
 * says 'License Status : Unlicensed', NVIDIA/gpu-operator#628).  RM's
 * virtualization mode and compute-mode rules are libcuda's own questions at
 * cuInit (ABI.md §7).  A refused RM allocation under it is the root step. */
static bool rule_vgpu_unlicensed(struct judge *j)
{
	struct ct_diag *d = j->d;
	struct ct_verdict *v = j->v;
	const struct fact *f = j->failed;
	const char *mode;

	if (!f || f->code != CT_CUDA_ERROR_DEVICE_UNAVAILABLE || d->virt_mode != (int)CT_NV_VIRT_MODE_VGX)
		return false;
	/* an exclusive or prohibited compute mode is B.10's cause, told by the code's own text */
	if (d->compute_rules > (int)CT_NV_COMPUTE_RULES_NONE)
		return false;
	if (d->open_fail.s.set || d->uvm_fail.s.set || d->hs_mismatch.s.set || d->card_empty.s.set)
		return false;
	mode = d->compute_rules < 0 ? "not recorded" : "Default";
	if (d->rm_fail.s.set) {
		v->layer = CT_LAYER_RESOURCE_MANAGER;
		v->step = d->rm_fail.s;
	} else {
		v->layer = CT_LAYER_DRIVER_API;
		v->step = f->s;
	}
	snprintf(v->summary, sizeof v->summary,
		 "%s = 46 (all CUDA devices are busy or unavailable) on an NVIDIA vGPU guest (the resource "
		 "manager reports virtualization mode VGX) whose compute mode is %s%s%s: no exclusive-process "
		 "holder explains it; a vGPU that holds no license refuses CUDA contexts this way",
		 f->s.call, mode, d->rm_fail.s.set ? "; RM refused " : "",
		 d->rm_fail.s.set ? d->rm_fail.what : "");
	snprintf(v->fix, sizeof v->fix,
		 "check the vGPU license: nvidia-smi -q | grep -i -A1 'License Status' (want 'Licensed'); "
		 "systemctl status nvidia-gridd and journalctl -u nvidia-gridd; the licensing config "
		 "/etc/nvidia/gridd.conf (ServerAddress, FeatureType) and the client token in "
		 "/etc/nvidia/ClientConfigToken/; then systemctl restart nvidia-gridd (a GRID driver without the "
		 "nvidia-gridd service cannot license at all)");
	return true;
}

/* WSL2: a libcuda other than the Windows driver's (/usr/lib/wsl/lib) was
 * loaded, a Linux driver's or the toolkit stub, which look for /dev/nvidia*
 * (catalog G3: numba/numba#7106, NVIDIA/cuml#5624) */
static bool rule_wsl_libcuda(struct judge *j)
{
	struct ct_diag *d = j->d;
	struct ct_verdict *v = j->v;
	const struct fact *f = j->failed;
	char rel[128] = "", dir[256];
	const char *sl;

	if (!d->wsl || !d->cuda_loaded || !f || strstr(d->cuda_path, "/usr/lib/wsl/"))
		return false;
	ct_trace_ctx_str(d->t, CT_CTX_KERNEL, 0, rel, sizeof rel);
	sl = strrchr(d->cuda_path, '/');
	snprintf(dir, sizeof dir, "%.*s", sl ? (int)(sl - d->cuda_path) : 0, d->cuda_path);
	v->layer = CT_LAYER_LOADER;
	v->step = d->cuda_load.s;
	snprintf(v->summary, sizeof v->summary,
		 "on WSL2 (kernel %s) CUDA must use the Windows driver's libcuda from /usr/lib/wsl/lib, but this "
		 "process loaded %s (%s), which looks for /dev/nvidia* nodes that WSL does not have; %s = %d",
		 rel[0] ? rel : "with /dev/dxg", d->cuda_path,
		 d->cuda_stub ? "the CUDA toolkit's stub" : "a Linux driver's libcuda", f->s.call, f->code);
	if (d->cuda_stub)
		snprintf(v->fix, sizeof v->fix,
			 "remove the toolkit's stubs directory (%s) from LD_LIBRARY_PATH; /usr/lib/wsl/lib must "
			 "come first (sudo ldconfig: /etc/ld.so.conf.d/ld.wsl.conf lists it)",
			 dir);
	else
		snprintf(v->fix, sizeof v->fix,
			 "never install a Linux NVIDIA driver inside WSL: remove the package that owns %s (dpkg -S %s, "
			 "then sudo apt-get remove --purge it), take %s out of LD_LIBRARY_PATH, and run sudo ldconfig "
			 "so that /usr/lib/wsl/lib (/etc/ld.so.conf.d/ld.wsl.conf) comes first",
			 d->cuda_path, d->cuda_path, dir);
	return true;
}

/* WSL2: libdxcore.so, through which the WSL libcuda reaches the GPU, could
 * not be loaded (catalog G3: docker/buildx#3295) */
static bool rule_wsl_dxcore(struct judge *j)
{
	struct ct_diag *d = j->d;
	struct ct_verdict *v = j->v;
	const struct fact *f = j->failed;

	if (!d->dxcore_fail.s.set || d->dxcore_loaded || !f || f == &d->cuda_load_fail)
		return false;
	v->layer = CT_LAYER_LOADER;
	v->step = d->dxcore_fail.s;
	snprintf(v->summary, sizeof v->summary,
		 "%s could not be loaded (%s): on WSL2 libcuda reaches the GPU through it; %s = %d followed",
		 d->dxcore_fail.what, d->dxcore_dlerror[0] ? d->dxcore_dlerror : "no loader message",
		 f->s.call, f->code);
	snprintf(v->fix, sizeof v->fix,
		 "in WSL: /usr/lib/wsl/lib must be on the loader path (sudo ldconfig; /etc/ld.so.conf.d/ld.wsl.conf); "
		 "in a container on WSL: mount /usr/lib/wsl and /dev/dxg (docker run --gpus all does; else "
		 "-v /usr/lib/wsl:/usr/lib/wsl --device /dev/dxg) and add /usr/lib/wsl/lib to LD_LIBRARY_PATH");
	return true;
}

/* the loader: the toolkit's stub libcuda (B.3 of the failure catalog) */
static bool rule_stub_library(struct judge *j)
{
	struct ct_diag *d = j->d;
	struct ct_verdict *v = j->v;

	if (!d->cuda_stub && !(j->final == &d->cuinit && j->final->code == CT_CUDA_ERROR_STUB_LIBRARY))
		return false;
	v->layer = CT_LAYER_LOADER;
	v->step = d->cuda_load.s.set ? d->cuda_load.s : j->final->s;
	snprintf(v->summary, sizeof v->summary,
		 "the CUDA toolkit's stub libcuda was loaded instead of the driver's (%s)",
		 d->cuda_path[0] ? d->cuda_path : "libcuda");
	snprintf(v->fix, sizeof v->fix,
		 "remove the toolkit's stubs directory (.../lib64/stubs, .../targets/*/lib/stubs) from "
		 "LD_LIBRARY_PATH; it is only for linking");
	return true;
}

/* the loader: a cuda-compat libcuda on a GPU without forward compatibility */
static bool rule_compat_unsupported(struct judge *j)
{
	struct ct_diag *d = j->d;
	struct ct_verdict *v = j->v;

	if (!d->cuda_compat || j->final->code != CT_CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE)
		return false;
	v->layer = CT_LAYER_LOADER;
	v->step = d->cuda_load.s;
	snprintf(v->summary, sizeof v->summary,
		 "a cuda-compat forward-compatibility libcuda (%s) was loaded on a GPU that does not support "
		 "forward compatibility (%s = %d)", d->cuda_path, j->final->s.call, j->final->code);
	snprintf(v->fix, sizeof v->fix,
		 "forward compatibility is for data-center GPUs only: remove the compat directory from "
		 "LD_LIBRARY_PATH and use the host driver (upgrade it if the runtime needs a newer one)");
	return true;
}

/*
 * No NVIDIA kernel module at all (bare metal after a kernel update, a DKMS
 * build that failed, Secure Boot refusing the module).  What real libcuda
 * 535 does then (measured, /work/shared/real-driver-580.md; tests/real):
 * as root it creates /dev/nvidiactl (c 195:255) itself with mknodat and the
 * open fails ENXIO; as an ordinary user its mknodat fails and it opens
 * nothing; cuInit = 100 either way, nvmlInit_v2 = 9.  The trace's context
 * says whether the module is there (/proc/driver/nvidia/version,
 * /sys/module/nvidia/version, the nvidia lines of /proc/devices); the
 * events must agree: a node with no driver behind it (ENXIO/ENODEV), NVML's
 * own "driver not loaded", or a driver that failed with no NVIDIA node
 * opened and no ioctl made.
 */
static bool no_module_context(const struct ct_diag *d)
{
	char buf[8];

	/* a damaged context may have lost the lines: their absence says nothing */
	if (ct_trace_ctx_damaged(d->t))
		return false;
	return !ct_trace_ctx_str(d->t, CT_CTX_NV_VERSION, 0, buf, sizeof buf) &&
	       !ct_trace_ctx_str(d->t, CT_CTX_NV_MODVERSION, 0, buf, sizeof buf) &&
	       !ct_trace_ctx(d->t, CT_CTX_DEVICES, 0, &(uint16_t){ 0 });
}

static bool rule_no_module(struct judge *j)
{
	struct ct_diag *d = j->d;
	struct ct_verdict *v = j->v;
	const struct fact *f = j->failed;
	bool nxio = d->open_fail.s.set && (d->open_fail.code == ENXIO || d->open_fail.code == ENODEV) &&
		    d->open_fail.s.t_ns <= j->final->s.end_ns;
	bool nvml9 = d->nvml_fail.s.set && d->nvml_fail.code == CT_NVML_ERROR_DRIVER_NOT_LOADED;
	bool silent = !d->open_fail.s.set && !d->nv_open_ok && !d->hs_seen && d->cards < 0 && !d->cvd_set &&
		      !f->s.injected && !strcmp(f->s.call, "cuInit") && f->code == CT_CUDA_ERROR_NO_DEVICE;
	char kernel[96] = "";

	/* WSL2 has no NVIDIA Linux module: CUDA goes through /dev/dxg */
	if (d->wsl || !no_module_context(d) || !(nxio || nvml9 || silent) || d->nv_ioctl_seen)
		return false;
	v->layer = CT_LAYER_KERNEL_HANDSHAKE;
	j->root = nxio ? &d->open_fail : nvml9 ? &d->nvml_fail : f;
	v->step = j->root->s;
	snprintf(v->summary, sizeof v->summary,
		 "the NVIDIA kernel module is not loaded: no /proc/driver/nvidia/version, no /sys/module/nvidia, "
		 "major 195 absent from /proc/devices");
	if (nxio)
		ct_appendf(v->summary, sizeof v->summary, "; open(%s) = %s: %s", d->open_fail.path,
			   ct_errno_name(d->open_fail.code),
			   d->fs_mknod_seen && !d->fs_mknod_err
				   ? "no driver is behind the node"
				   : "the node exists but no driver is behind it");
	if (nvml9)
		ct_appendf(v->summary, sizeof v->summary, "; %s = %d (NVML_ERROR_DRIVER_NOT_LOADED)",
			   d->nvml_fail.s.call, d->nvml_fail.code);
	if (f != &d->nvml_fail || !nvml9)
		ct_appendf(v->summary, sizeof v->summary, "; %s = %d", f->s.call, f->code);
	/* what libcuda did about it before it opened the node (format 1.5):
	 * as root it makes the node itself, so the node proves nothing */
	if (d->fs_mknod_seen && !d->fs_mknod_err)
		ct_appendf(v->summary, sizeof v->summary,
			   "; libcuda created %s itself (mknod c %u:%u), so the node proves nothing",
			   d->fs_mknod_path, (unsigned)(d->fs_mknod_rdev >> 32), (unsigned)d->fs_mknod_rdev);
	else if (d->fs_mknod_seen)
		ct_appendf(v->summary, sizeof v->summary, "; libcuda tried to create %s (mknod = %s)",
			   d->fs_mknod_path, ct_errno_name(d->fs_mknod_err));
	if (d->fs_modprobe < 0)
		ct_appendf(v->summary, sizeof v->summary,
			   "; libcuda looked for %s (which loads the module and makes the nodes): it is not installed",
			   d->fs_modprobe_path);
	/* the setuid helper it ran (format 1.6): what the caller saw */
	if (d->helper_runs)
		ct_appendf(v->summary, sizeof v->summary, "; libcuda ran %s %d time%s%s%s%s", d->helper_path,
			   d->helper_runs, d->helper_runs == 1 ? "" : "s",
			   d->helper_failed == d->helper_runs ? (d->helper_runs == 1 ? ": it " : ": each ")
			   : d->helper_failed                 ? ": the last failed run "
							      : ", it succeeded",
			   d->helper_failed ? d->helper_how : "",
			   d->helper_failed ? " (it could not load the module or make the nodes)" : "");
	ct_trace_ctx_str(d->t, CT_CTX_KERNEL, 0, kernel, sizeof kernel);
	snprintf(v->fix, sizeof v->fix,
		 "load the module: 'sudo modprobe nvidia' ('dmesg | grep -iE \"nvrm|nvidia\"' says why it does not "
		 "load); after a kernel update the module must be built for this kernel (uname -r = %s): 'dkms status', "
		 "'sudo dkms autoinstall' with the headers of %s installed, or reinstall the driver; with Secure Boot on "
		 "('mokutil --sb-state') the module must be signed with an enrolled key (the distribution's signed "
		 "driver packages, or 'mokutil --import' of the DKMS key); in a container the module is the host's",
		 kernel[0] ? kernel : "?", kernel[0] ? kernel : "this kernel");
	if (f->code == CT_CUDA_ERROR_NO_DEVICE || v->final_code == CT_cudaErrorNoDevice)
		snprintf(v->hint, sizeof v->hint,
			 "100 'no CUDA-capable device is detected' (torch: 'No CUDA GPUs are available') does not "
			 "mean a hidden device here: CUDA_VISIBLE_DEVICES is not the cause, there is no driver");
	return true;
}

/* -1 EINVAL from an RM escape: the driver answers a well-formed RM call
 * with a status in the block; a filter in between said no (catalog G5:
 * gVisor's nvproxy, google/gvisor#9846, #9372) */
static void sandbox_text(struct ct_diag *d, const struct fact *f, struct ct_verdict *v)
{
	char rel[64] = "";
	const char *arrow = strstr(f->what, " -> ");
	int n = arrow ? (int)(arrow - f->what) : (int)strlen(f->what);

	ct_trace_ctx_str(d->t, CT_CTX_KERNEL, 0, rel, sizeof rel);
	snprintf(v->summary, sizeof v->summary,
		 "%.*s returned -1 EINVAL with no RM status: the NVIDIA driver answers a well-formed RM call with a "
		 "status in its parameter block, so something between the program and the driver rejected it: a "
		 "sandbox's ioctl filter (gVisor's nvproxy rejects RM controls and classes it does not know) or an "
		 "interposer%s",
		 n, f->what,
		 !strcmp(rel, "4.4.0") ? "; the kernel reports release 4.4.0, as gVisor's does" : "");
	snprintf(v->fix, sizeof v->fix,
		 "gVisor: use a runsc release whose nvproxy supports this driver version and this call (runsc "
		 "--nvproxy; compare 'runsc --version' with the driver), or run without the sandbox; otherwise look "
		 "for an LD_PRELOAD library or seccomp filter that handles ioctl");
}

/* no /dev/nvidia-uvm in a container whose host has nvidia_uvm loaded: the
 * runtime's CDI spec predates the module (catalog G1, NVIDIA/nvidia-container-toolkit#50) */
static void uvm_container_text(struct ct_diag *d, const struct fact *f, struct ct_verdict *v)
{
	char nvd[64], line[160];
	bool host_uvm = false;

	if (f->node_kind != CT_NODE_UVM || f->code != ENOENT ||
	    !ct_trace_env(d->t, "NVIDIA_VISIBLE_DEVICES", nvd, sizeof nvd))
		return;
	for (unsigned i = 0; !host_uvm && ct_trace_ctx_str(d->t, CT_CTX_DEVICES, i, line, sizeof line); i++)
		host_uvm = strstr(line, "nvidia-uvm") != NULL;
	if (!host_uvm)
		return;
	ct_appendf(v->summary, sizeof v->summary,
		   "; the host's nvidia_uvm is loaded (/proc/devices lists nvidia-uvm) but this container "
		   "(NVIDIA_VISIBLE_DEVICES=%s) has no node: the runtime's CDI spec was generated before "
		   "nvidia_uvm loaded, or the node was not passed",
		   nvd);
	snprintf(v->fix, sizeof v->fix,
		 "on the host: sudo nvidia-ctk cdi generate --output=/etc/cdi/nvidia.yaml and recreate the "
		 "container (or pass --device /dev/nvidia-uvm --device /dev/nvidia-uvm-tools)");
}

/* the earliest low-level failure before the final error: a device node, the
 * version handshake, an RM or UVM ioctl, an empty GPU list */
static bool rule_low_level(struct judge *j)
{
	struct ct_diag *d = j->d;
	struct ct_verdict *v = j->v;
	const struct fact *cand[] = { &d->hs_mismatch, &d->open_fail,  &d->uvm_fail,
				      &d->rm_fail,     &d->card_empty, &d->dxg_fail };
	const struct fact *root = NULL;

	for (size_t i = 0; i < sizeof cand / sizeof cand[0]; i++)
		if (cand[i]->s.set && (!root || cand[i]->s.seq < root->s.seq))
			root = cand[i];
	/* a failure after the final call returned cannot explain it (the
	 * ioctls of cuInit come after cuInit's enter record, inside it) */
	if (root && root->s.t_ns > j->final->s.end_ns)
		root = NULL;
	if (!root && d->caps_fail.s.set)
		root = &d->caps_fail;
	if (!root)
		return false;
	j->root = root;
	v->step = root->s;
	if (root == &d->hs_mismatch) {
		v->layer = CT_LAYER_KERNEL_HANDSHAKE;
		handshake_text(d, root, v);
	} else if (root == &d->open_fail || root == &d->caps_fail) {
		v->layer = CT_LAYER_DEVICE_NODE;
		device_node_text(root, v);
		if (root == &d->open_fail)
			uvm_container_text(d, root, v);
	} else if (root == &d->uvm_fail) {
		v->layer = CT_LAYER_UVM;
		rm_text(root, v, true);
	} else if (root == &d->dxg_fail) {
		const char *arrow = strstr(root->what, " -> ");
		v->layer = CT_LAYER_DEVICE_NODE;
		snprintf(v->summary, sizeof v->summary,
			 "ioctl(/dev/dxg, %.*s) failed%s%s: WSL2's GPU paravirtualization (dxgkrnl) refused it, so "
			 "the Windows driver was not reached",
			 arrow ? (int)(arrow - root->what) : (int)strlen(root->what), root->what,
			 arrow ? " with" : "", arrow ? arrow + 3 : "");
		snprintf(v->fix, sizeof v->fix, "%s", FIX_DXG);
	} else if (root == &d->card_empty) {
		v->layer = CT_LAYER_RESOURCE_MANAGER;
		snprintf(v->summary, sizeof v->summary,
			 "the kernel driver lists no GPU (NV_ESC_CARD_INFO returned no valid entry)");
		snprintf(v->fix, sizeof v->fix,
			 "no GPU is bound to the nvidia driver here: check 'nvidia-smi -L', NVIDIA_VISIBLE_DEVICES "
			 "of the container, and whether the GPU was excluded (NVreg_ExcludedGpus) or lost (dmesg)");
	} else if (ct_diag_has(root->what, "WAIT_OPEN_COMPLETE")) {
		/* a non-blocking open of /dev/nvidiaN succeeds and its failure
		 * arrives here (550.40.07+, ABI.md §8): the blocking open's EIO */
		v->layer = CT_LAYER_DEVICE_NODE;
		snprintf(v->summary, sizeof v->summary,
			 "the deferred open of a GPU node failed (%s): the GPU node exists but the GPU failed "
			 "to initialize in the kernel",
			 root->what);
		snprintf(v->fix, sizeof v->fix, "%s", FIX_GPU_INIT);
	} else {
		v->layer = CT_LAYER_RESOURCE_MANAGER;
		rm_text(root, v, false);
		if (root == &d->rm_fail && d->rm_fail_nostatus)
			sandbox_text(d, root, v);
	}
	return true;
}

/* cuInit has no ordinal to be invalid: libcuda 580 answers a kernel module
 * of an older branch with 101 (measured, i07 of the H200 fixtures).  With
 * libcuda's version unknown (not in its file name), the handshake's answer
 * is the evidence */
static bool rule_older_branch(struct judge *j)
{
	struct ct_diag *d = j->d;
	struct ct_verdict *v = j->v;
	const struct fact *f = j->failed;

	if (f->code != CT_CUDA_ERROR_INVALID_DEVICE || strcmp(f->s.call, "cuInit") || !d->hs_event.s.set ||
	    d->hs_event.s.t_ns > f->s.end_ns || !d->hs_kernel[0] ||
	    (d->cuda_ver[0] && ct_version_cmp(d->cuda_ver, d->hs_kernel) == 0))
		return false;
	v->layer = CT_LAYER_KERNEL_HANDSHAKE;
	v->step = d->hs_event.s;
	snprintf(v->summary, sizeof v->summary,
		 "cuInit = %d (invalid device, from a call that takes no device) right after the kernel module "
		 "reported version %s in the version handshake: libcuda %s%s%s is of another branch (libcuda 580 "
		 "answers an older kernel branch with 101)", f->code, d->hs_kernel, d->cuda_path[0] ? d->cuda_path : "",
		 d->cuda_ver[0] ? " is version " : " (version not in its file name)", d->cuda_ver);
	snprintf(v->fix, sizeof v->fix, "%s from LD_LIBRARY_PATH", FIX_SAME_VERSION);
	return true;
}

/* the user-mode driver and the kernel module disagree (803) */
static bool rule_driver_mismatch(struct judge *j)
{
	struct ct_diag *d = j->d;
	struct ct_verdict *v = j->v;
	const struct fact *f = j->failed;

	if (f->code != CT_CUDA_ERROR_SYSTEM_DRIVER_MISMATCH)
		return false;
	v->layer = CT_LAYER_KERNEL_HANDSHAKE;
	/* the handshake is where libcuda learnt the kernel's version */
	v->step = d->hs_event.s.set && d->hs_event.s.t_ns <= f->s.end_ns ? d->hs_event.s : f->s;
	snprintf(v->summary, sizeof v->summary,
		 "%s = %d: the user-mode driver %s%s does not match the kernel module %s",
		 f->s.call, f->code, d->cuda_path[0] ? d->cuda_path : "libcuda", d->cuda_compat ? " (cuda-compat)" : "",
		 v->contract.kernel_version[0] ? v->contract.kernel_version : "(version not recorded)");
	snprintf(v->fix, sizeof v->fix, "use the libcuda of the installed driver version (or reboot after an upgrade)");
	if (!f->s.injected && !(d->hs_event.s.set && d->hs_event.s.injected) && stale_evidence(d, v)) {
		struct how h;
		struct lib_ref l = cuda_ref(d);
		loader_how(d, &l, &h);
		ct_appendf(v->summary, sizeof v->summary, " (libcuda %s, found through %s)", d->cuda_ver,
			   h.text);
		stale_fix(d, &l, v->contract.kernel_version, &h, v->fix, sizeof v->fix);
	}
	return true;
}

/* the runtime's answer (35, or a statically linked runtime that gave up
 * without a call the shim could see) when the module supports the runtime
 * but the libcuda loaded is an older copy: torch's "driver too old (found
 * version 12020)" in front of a 580 module */
static bool stale_runtime(struct judge *j, const struct fact *f, bool is_static)
{
	struct ct_diag *d = j->d;
	struct ct_verdict *v = j->v;
	int kcuda = ct_driver_cuda_version(v->contract.kernel_version);
	struct how h;
	struct lib_ref l = cuda_ref(d);

	if (!stale_evidence(d, v) || ct_version_cmp(d->cuda_ver, v->contract.kernel_version) > 0 ||
	    kcuda < v->contract.runtime_version || (f && f->s.injected) ||
	    (d->drvver.s.set && d->drvver.s.injected))
		return false;
	loader_how(d, &l, &h);
	v->layer = CT_LAYER_LOADER;
	v->step = d->drvver.s.set ? d->drvver.s : d->cuda_load.s;
	snprintf(v->summary, sizeof v->summary,
		 "an older libcuda was loaded: the CUDA runtime (CUDA %d.%d%s) got cuDriverGetVersion = %d from %s "
		 "(libcuda %s, found through %s), but the kernel module is %s (CUDA %d.%d): the installed driver is "
		 "new enough; ",
		 v->contract.runtime_version / 1000, v->contract.runtime_version % 1000 / 10,
		 is_static ? ", linked statically" : "", v->contract.driver_version, d->cuda_path,
		 d->cuda_ver, h.text, v->contract.kernel_version, kcuda / 1000, kcuda % 1000 / 10);
	if (is_static)
		ct_appendf(v->summary, sizeof v->summary,
			   "the runtime returns %d (cudaErrorInsufficientDriver) to "
			   "every call",
			   CT_cudaErrorInsufficientDriver);
	else
		ct_appendf(v->summary, sizeof v->summary, "%s = %d", f->s.call, f->code);
	stale_fix(d, &l, v->contract.kernel_version, &h, v->fix, sizeof v->fix);
	snprintf(v->hint, sizeof v->hint,
		 "cudart says 35 'CUDA driver version is insufficient' and torch 'The NVIDIA driver on your system is "
		 "too old (found version %d)': the driver is not too old, the program loaded a stale copy of its "
		 "library",
		 v->contract.driver_version);
	return true;
}

/* a statically linked runtime (nvcc's default): its own calls are not
 * interposed, but cuGetProcAddress's cudaVersion (or the file name) and
 * cuDriverGetVersion show the contract it checks; a mismatch is the 35
 * every one of its calls returns, with no cuInit reaching the driver */
static bool rule_static_runtime(struct judge *j)
{
	struct ct_diag *d = j->d;
	struct ct_verdict *v = j->v;

	if (j->final || v->contract.compat.cls != CT_COMPAT_MISMATCH || !d->drv_version || d->rt_version ||
	    !v->contract.runtime_version || (d->cuinit.s.set && !d->cuinit.code))
		return false;
	v->ok = false;
	v->final = d->drvver.s;
	snprintf(v->final.call, sizeof v->final.call, "cudart (static)");
	snprintf(v->final.text, sizeof v->final.text,
		 "the statically linked CUDA runtime returns %d (cudaErrorInsufficientDriver) to every call",
		 CT_cudaErrorInsufficientDriver);
	v->final_code = CT_cudaErrorInsufficientDriver;
	snprintf(v->final_name, sizeof v->final_name, "cudaErrorInsufficientDriver");
	if (stale_runtime(j, NULL, true))
		return true;
	v->layer = CT_LAYER_RUNTIME;
	v->step = d->drvver.s;
	snprintf(v->summary, sizeof v->summary,
		 "the CUDA runtime (CUDA %d.%d, linked statically: its calls are not interposed; version from %s) needs "
		 "a newer driver than this one (cuDriverGetVersion = %d): it returns %d (cudaErrorInsufficientDriver) "
		 "to every call",
		 v->contract.runtime_version / 1000, v->contract.runtime_version % 1000 / 10,
		 v->contract.runtime_from ? v->contract.runtime_from : "?", v->contract.driver_version,
		 CT_cudaErrorInsufficientDriver);
	snprintf(v->fix, sizeof v->fix, "%s",
		 v->contract.compat.fix
			 ? v->contract.compat.fix
			 : "upgrade the NVIDIA driver, or build the program for an older CUDA");
	return true;
}

/* the runtime needs a newer driver than this one (35, or the contract says so) */
static bool rule_runtime_too_new(struct judge *j)
{
	struct ct_diag *d = j->d;
	struct ct_verdict *v = j->v;
	const struct fact *f = j->failed;

	if (f != &d->rt_fail ||
	    (f->code != CT_cudaErrorInsufficientDriver && v->contract.compat.cls != CT_COMPAT_MISMATCH))
		return false;
	if (stale_runtime(j, f, false))
		return true;
	v->layer = CT_LAYER_RUNTIME;
	/* the root is the driver's answer the runtime compared with */
	v->step = d->drvver.s.set && d->drvver.s.t_ns <= f->s.end_ns ? d->drvver.s : f->s;
	snprintf(v->summary, sizeof v->summary,
		 "the CUDA runtime (CUDA %d.%d) needs a newer driver than this one (cuDriverGetVersion = %d): %s = %d",
		 v->contract.runtime_version / 1000, v->contract.runtime_version % 1000 / 10,
		 v->contract.driver_version, f->s.call, f->code);
	snprintf(v->fix, sizeof v->fix, "%s",
		 v->contract.compat.fix ? v->contract.compat.fix
					: "upgrade the NVIDIA driver, or use a build of the program for an older CUDA");
	return true;
}

/* the runtime asked libcuda for entry points it does not have and gave up
 * (cudart 11.8 against a libcuda that is not a complete driver: 500) */
static bool rule_missing_entry_points(struct judge *j)
{
	struct ct_diag *d = j->d;
	struct ct_verdict *v = j->v;
	const struct fact *f = j->final;
	int n = d->gpa_notfound[1] ? d->gpa_notfound[1] : d->gpa_notfound[0];

	if (f != &d->rt_fail || f->code != CT_cudaErrorSymbolNotFound || !n ||
	    d->gpa_notfound_first.s.t_ns > f->s.end_ns)
		return false;
	v->layer = CT_LAYER_LOADER;
	v->step = d->gpa_notfound_first.s;
	snprintf(v->summary, sizeof v->summary,
		 "libcuda %s does not provide driver entry points the CUDA runtime asks for: %s, and %d more "
		 "look-up%s answered CUDA_ERROR_NOT_FOUND; %s = %d (cudaErrorSymbolNotFound)",
		 d->cuda_path[0] ? d->cuda_path : "", d->gpa_notfound_first.s.text, n - 1, n == 2 ? "" : "s",
		 f->s.call, f->code);
	snprintf(v->fix, sizeof v->fix,
		 "the libcuda.so.1 found first is not a complete NVIDIA driver library (a stand-in, a partial copy, "
		 "or a build that lacks these functions): put the driver's own libcuda (the version of the kernel "
		 "module) first on the loader path");
	return true;
}

/* no lower cause: the driver API's code is the verdict (api_codes) */
static bool rule_driver_code(struct judge *j)
{
	struct ct_verdict *v = j->v;
	const struct fact *f = j->failed;

	v->layer = CT_LAYER_DRIVER_API;
	v->step = f->s;
	for (size_t i = 0; i < sizeof api_codes / sizeof api_codes[0]; i++) {
		const struct api_code *c = &api_codes[i];
		if (c->code != f->code)
			continue;
		if (c->explain) {
			c->explain(j, f);
		} else {
			snprintf(v->summary, sizeof v->summary, "%s = %d%s", f->s.call, f->code, c->what);
			snprintf(v->fix, sizeof v->fix, "%s", c->fix);
		}
		return true;
	}
	snprintf(v->summary, sizeof v->summary, "%s failed with %d%s%s and no lower-level failure was recorded",
		 f->s.call, f->code, v->final_name[0] ? " " : "", v->final_name);
	snprintf(v->fix, sizeof v->fix, "run 'cutrace doctor' to check the machine");
	return true;
}

/* the first that returns true decides; the last always does */
static bool (*const rules[])(struct judge *j) = {
	rule_hang,
	rule_static_runtime,
	rule_healthy,
	rule_nvml_not_loaded,
	rule_libcuda_not_loaded,
	rule_stale_driver_files,
	rule_wsl_libcuda,
	rule_wsl_dxcore,
	rule_stub_library,
	rule_compat_unsupported,
	rule_interposer,
	rule_no_module,
	rule_vgpu_unlicensed,
	rule_low_level,
	rule_older_branch,
	rule_driver_mismatch,
	rule_runtime_too_new,
	rule_missing_entry_points,
	rule_driver_code,
};

/* ---- after the rules ---------------------------------------------------------------------- */
/* the scenarios that change the environment instead of injecting
 * (tracer/session/scenarios.c): whether this failure is the change's doing */
static bool scenario_env_made(const struct ct_diag *d, const struct ct_verdict *v)
{
	if (!strcmp(v->scenario, "stub-library"))
		return v->layer == CT_LAYER_LOADER && d->cuda_stub;
	if (!strcmp(v->scenario, "no-visible-device"))
		return v->layer == CT_LAYER_DRIVER_API && d->cvd_set && !d->cvd[0] && v->final.set &&
		       v->final_code == CT_CUDA_ERROR_NO_DEVICE;
	if (!strcmp(v->scenario, "cvd-wrong-uuid"))
		return v->layer == CT_LAYER_DRIVER_API && d->cvd_set && !strncmp(d->cvd, "GPU-", 4) &&
		       v->final.set && v->final_code == CT_CUDA_ERROR_NO_DEVICE;
	return false;
}

/* a real failure (or a healthy process) under rules or a scenario: say
 * that no rule made it, and what did fire */
static void rules_not_fired(const struct ct_diag *d, struct ct_verdict *v)
{
	char spec[200] = "";
	bool in_force = ct_trace_ctx_str(d->t, CT_CTX_INJECT, 0, spec, sizeof spec) && spec[0];

	if (!in_force && !v->scenario[0])
		return;
	if (v->notes[0])
		ct_appendf(v->notes, sizeof v->notes, "; ");
	if (v->scenario[0])
		ct_appendf(v->notes, sizeof v->notes, "scenario %s was in force", v->scenario);
	else
		ct_appendf(v->notes, sizeof v->notes, "the injection rules '%s' were in force", spec);
	if (!d->first_injected.s.set)
		ct_appendf(v->notes, sizeof v->notes, " but none of its rules fired in this process%s",
			   v->ok ? "" : ": this failure is real, cutrace did not make it");
	else if (v->ok)
		ct_appendf(v->notes, sizeof v->notes, "; a rule fired (%s) and the process still succeeded",
			   d->first_injected.s.text);
	else
		ct_appendf(v->notes, sizeof v->notes,
			   "; a rule fired (%s) but changed nothing this failure depends on (a delay, or a call "
			   "after the failing step): this failure is real",
			   d->first_injected.s.text);
}

/* whether a cutrace rule (or scenario) made the failure, and what else to say */
static void notes(struct judge *j)
{
	struct ct_diag *d = j->d;
	struct ct_verdict *v = j->v;

	/* injected only when a rule fired on the root step (a delay only when
	 * it held the step: a hang), or upstream of it: a changed result (an
	 * error, a code, a status, a value, a version) before the root step
	 * returned.  rule_hang may have inferred a delay in an older trace. */
	if (!v->ok) {
		const struct ct_diag_step *root = v->step.set ? &v->step : &v->final;
		bool at_root = root->set && root->injected && (!root->delayed || v->hung);
		bool upstream = d->first_cause.s.set && root->set && d->first_cause.s.t_ns <= root->end_ns;
		v->injected = v->injected || at_root || upstream;
		if (upstream && !at_root && d->first_cause.s.seq != root->seq)
			snprintf(v->notes, sizeof v->notes, "an injected fault came first: %s",
				 d->first_cause.s.text);
	}
	/* a named scenario may work by changing the environment, not by a rule:
	 * its failure is one cutrace made when the evidence shows the change */
	if (ct_trace_env(d->t, "CUTRACE_SCENARIO", v->scenario, sizeof v->scenario) && v->scenario[0] &&
	    !v->ok && !v->injected) {
		v->injected = scenario_env_made(d, v);
	}
	if (!v->injected)
		rules_not_fired(d, v);
	if (!v->ok && v->final.set && v->final_code == CT_CUDA_ERROR_UNKNOWN && v->layer != CT_LAYER_DRIVER_API)
		snprintf(v->hint, sizeof v->hint,
			 "PyTorch reports this as 'CUDA unknown error - this may be due to an incorrectly set up "
			 "environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start': that "
			 "hint is misleading here, the cause is the %s step above", ct_layer_name(v->layer));
	/* NVML probed for and missing, while something else decided the verdict */
	if (d->nvml_load_fail.s.set && !d->nvml_loaded && (!v->final.set || v->final.seq != d->nvml_load_fail.s.seq))
		ct_appendf(v->notes, sizeof v->notes, "%s%s could not be loaded (%s)%s",
			   v->notes[0] ? "; " : "", d->nvml_load_fail.what,
			   d->nvml_dlerror[0] ? d->nvml_dlerror : "no loader message",
			   v->ok ? ": CUDA does not need NVML and initialized, but nvidia-smi and NVML-based tools "
				   "(pynvml, GPU monitors) will fail here"
				 : "");
	/* NVML failed in a process whose CUDA initialization worked (torch asks
	 * NVML after creating its context, and carries on): still the failure,
	 * but say what does and does not work */
	if (j->final == &d->nvml_fail && d->cuinit.s.set && !d->cuinit.code)
		ct_appendf(v->notes, sizeof v->notes,
			   "%sCUDA itself initialized (cuInit = 0) and the program can use the "
			   "GPU; NVML fails, and with it nvidia-smi, pynvml and GPU monitors",
			   v->notes[0] ? "; " : "");
	if (d->interposer[0] && !v->ok && !strstr(v->summary, d->interposer))
		ct_appendf(v->notes, sizeof v->notes,
			   "%sthe GPU-sharing interposer %s was in the process (%s): it intercepts CUDA calls and "
			   "may change what they return",
			   v->notes[0] ? "; " : "", d->interposer, d->interposer_path);
	if (v->ok && (d->cuda_deleted || d->mount_deleted))
		ct_appendf(v->notes, sizeof v->notes,
			   "%sthe libcuda this process uses (%s) %s: the driver was upgraded under it; restart it "
			   "before the next CUDA start-up fails",
			   v->notes[0] ? "; " : "", d->cuda_mapped,
			   d->cuda_deleted ? "was deleted after it was loaded"
					   : "comes from a mount deleted on the host");
	if (d->deepbind)
		ct_appendf(v->notes, sizeof v->notes,
			   "%s%s was loaded with RTLD_DEEPBIND: calls inside it may bypass "
			   "the shim",
			   v->notes[0] ? "; " : "", d->deepbind_lib);
}

/*
 * What makes two processes' failures the same, for the job summary: the
 * layer, the kind of root step and what it was about (node and errno, the
 * ioctl and its status, the library), the final code, hung or not, injected
 * or not.  Never times, pids, fds or handles: a job-wide hang is one group.
 */
static void group_key(struct ct_diag *d, struct ct_verdict *v)
{
	const struct fact *facts[] = { &d->open_fail,      &d->caps_fail,     &d->uvm_fail,
				       &d->rm_fail,        &d->hs_mismatch,   &d->card_empty,
				       &d->unfinished_io,  &d->unfinished_ld, &d->cuda_load_fail,
				       &d->nvml_load_fail, &d->dxg_fail,      &d->dxcore_fail };
	const char *detail = "";
	int code = 0;

	if (v->ok) {
		snprintf(v->group_key, sizeof v->group_key, "ok");
		return;
	}
	for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++)
		if (v->step.set && facts[i]->s.set && facts[i]->s.seq == v->step.seq) {
			detail = facts[i] == &d->cuda_load_fail || facts[i] == &d->nvml_load_fail ? facts[i]->what
												   : facts[i]->path;
			code = facts[i]->code;
			break;
		}
	snprintf(v->group_key, sizeof v->group_key, "%s|%s|%s|%d|%s|%d|%c%c", ct_layer_name(v->layer),
		 v->step.set ? v->step.call : "", detail, code, v->final.set ? v->final.call : "", v->final_code,
		 v->hung ? 'H' : '-', v->injected ? 'I' : '-');
}

void ct_diag_end(struct ct_diag *d, const struct ct_trace_stats *st, struct ct_verdict *v)
{
	struct judge j = { .d = d, .v = v, .h = ct_trace_header(d->t) };
	char name[64];

	(void)st;
	memset(v, 0, sizeof *v);
	v->pid = j.h->pid;
	v->rank = rank_of(d->t);
	ct_trace_ctx_str(d->t, CT_CTX_HOST, 0, v->host, sizeof v->host);
	if (ct_trace_ctx_str(d->t, CT_CTX_EXE, 0, v->exe, sizeof v->exe))
		memmove(v->exe, basename_of(v->exe), strlen(basename_of(v->exe)) + 1);
	contract(d, v);
	process_end(d, j.h, v);
	if (d->slow.s.set && d->slow_ns >= CT_SLOW_CALL_NS) {
		char text[96];
		snprintf(v->slow_call, sizeof v->slow_call, "%s", call_text(&d->slow.s, text, sizeof text));
		/* "cuInit(flags=0x0) = CUDA_SUCCESS": the call, not its result */
		char *eq = strstr(v->slow_call, ") = ");
		if (eq)
			eq[1] = 0;
		v->slow_ns = d->slow_ns;
	}

	j.final = final_error(d);
	if (j.final) {
		v->final = j.final->s;
		v->final_code = j.final->code;
		if (j.final != &d->cuda_load_fail && j.final != &d->nvml_load_fail)
			snprintf(v->final_name, sizeof v->final_name, "%s",
				 code_name(&j.final->s, j.final->code, name, sizeof name));
		j.failed = failed_call(d, j.final);
	}
	for (size_t i = 0; i < sizeof rules / sizeof rules[0] && !rules[i](&j); i++)
		;
	notes(&j);
	group_key(d, v);
}
