/* doctor's report as text (sections of facts and findings) and as JSON. */
#include "machine_int.h"

#include <string.h>
#include <sys/stat.h>

#include "xlat.h"

/* ---- text ------------------------------------------------------------- */

static void sev_tag(FILE *f, enum ct_severity s)
{
	static const enum ct_color col[] = { CT_C_GREEN, CT_C_CYAN, CT_C_YELLOW, CT_C_RED };
	static const char *const tag[] = { "[ok]     ", "[info]   ", "[warn]   ", "[PROBLEM]" };

	fprintf(f, "%s%s%s%s", ct_c(f, col[s]), s == CT_SEV_PROBLEM ? ct_c(f, CT_C_BOLD) : "",
		tag[s], ct_c(f, CT_C_RESET));
}

static void findings_text(const struct ct_machine_report *r, enum ct_section sec, FILE *f)
{
	for (int i = 0; i < r->n_findings; i++) {
		const struct ct_finding *x = &r->findings[i];
		if (x->section != sec)
			continue;
		fputs("  ", f);
		sev_tag(f, x->sev);
		if (x->layer != CT_LAYER_NONE)
			fprintf(f, " %s%s%s:", ct_c(f, CT_C_DIM), ct_layer_name(x->layer), ct_c(f, CT_C_RESET));
		fprintf(f, " %s\n", x->summary);
		if (x->fix[0])
			fprintf(f, "            fix: %s\n", x->fix);
	}
}

static void mode_str(unsigned mode, bool chr, char out[11])
{
	const char *rwx = "rwxrwxrwx";
	out[0] = chr ? 'c' : '-';
	for (int i = 0; i < 9; i++)
		out[1 + i] = (mode & (0400u >> i)) ? rwx[i] : '-';
	out[10] = 0;
}

static void nodes_text(const struct ct_machine_report *r, FILE *f)
{
	for (int i = 0; i < r->n_nodes; i++) {
		const struct ct_devnode *n = &r->nodes[i];
		char m[11];

		if (!n->exists) {
			if (n->required)
				fprintf(f, "  %-30s missing\n", n->path);
			continue;
		}
		mode_str(n->mode, n->is_chr, m);
		if (n->is_chr)
			fprintf(f, "  %-30s %3u:%-5u %s %s:%s", n->path, n->major, n->minor, m, n->owner,
				n->group);
		else
			fprintf(f, "  %-30s not a character device (%s)", n->path, m);
		if (n->open_tried) {
			const char *en = n->open_errno ? ct_errno_name(n->open_errno) : "ok";
			fprintf(f, "  open %s: %s", n->open_mode, en ? en : "error");
		}
		fputc('\n', f);
	}
}

static void kmod_text(const struct ct_kmod *k, FILE *f)
{
	static const char *const shown[] = {
		"ModifyDeviceFiles", "DeviceFileUID", "DeviceFileGID", "DeviceFileMode",
		"PreserveVideoMemoryAllocations", "EnableGpuFirmware",
	};
	bool any = false;

	fprintf(f, "  /proc/driver/nvidia/version: %s\n", k->proc_present ? k->proc_line : "absent");
	fprintf(f, "  /sys/module/nvidia/version:  %s\n", k->sys_present ? k->sys_version : "absent");
	fprintf(f, "  modules: nvidia %s, nvidia_uvm %s%s%s%s, nvidia_modeset %s\n",
		k->nvidia_loaded ? "loaded" : "absent", k->uvm_loaded ? "loaded" : "absent",
		k->uvm_disable_hmm[0] ? " (uvm_disable_hmm=" : "", k->uvm_disable_hmm,
		k->uvm_disable_hmm[0] ? ")" : "", k->modeset_loaded ? "loaded" : "absent");
	if (k->proc_devices_read) {
		fprintf(f, "  /proc/devices:");
		if (k->major_nvidia >= 0)
			fprintf(f, " nvidia %d", k->major_nvidia);
		if (k->major_nvidiactl >= 0)
			fprintf(f, " nvidiactl %d", k->major_nvidiactl);
		if (k->major_uvm >= 0)
			fprintf(f, " nvidia-uvm %d", k->major_uvm);
		if (k->major_caps >= 0)
			fprintf(f, " nvidia-caps %d", k->major_caps);
		if (k->major_nvidia < 0 && k->major_nvidiactl < 0 && k->major_uvm < 0)
			fprintf(f, " no nvidia entries");
		fputc('\n', f);
	}
	if (k->gpu_count >= 0)
		fprintf(f, "  GPUs attached: %d\n", k->gpu_count);
	for (int i = 0; i < k->gpu_count && i < CT_MAX_GPUS; i++)
		fprintf(f, "    %s  %s  %s\n", k->gpus[i].bus, k->gpus[i].model[0] ? k->gpus[i].model : "?",
			k->gpus[i].uuid);
	for (size_t s = 0; s < sizeof shown / sizeof shown[0]; s++)
		for (int i = 0; i < k->n_params; i++)
			if (!strcmp(k->params[i].name, shown[s])) {
				fprintf(f, "%s%s=%s", any ? " " : "  params: ", k->params[i].name,
					k->params[i].value);
				any = true;
			}
	if (any)
		fputc('\n', f);
}

/* the hardware facts (machine_hw.c) */
static void hw_text(const struct ct_hw *h, FILE *f)
{
	if (h->kernel_release[0])
		fprintf(f, "  kernel %s: module file %s%s%s%s; Secure Boot %s; lockdown %s\n",
			h->kernel_release,
			h->module_file[0]     ? h->module_file
			: h->modules_dep_read ? "none"
					      : "unknown (no modules.dep)",
			h->dkms[0] ? "; DKMS builds " : "", h->dkms, "",
			h->secure_boot == 1   ? "on"
			: h->secure_boot == 0 ? "off"
					      : "unknown",
			h->lockdown[0] ? h->lockdown : "unknown");
	if (h->fw_count >= 0)
		fprintf(f, "  GSP firmware: %s%s%s\n", h->fw_dir[0] ? h->fw_dir : "no directory",
			h->fw_count ? ": " : " (no gsp_*.bin)", h->fw_files);
	for (int i = 0; i < h->n_pci; i++) {
		const struct ct_pcidev *g = &h->pci[i];
		fprintf(f, "  PCI %s  10de:%04x  %s%s%s%s%s  driver %s\n", g->addr, g->device,
			g->chip ? g->chip : "?", g->product && *g->product ? " " : "",
			g->product ? g->product : "", g->arch ? ", " : "", g->arch ? g->arch : "",
			g->driver[0] ? g->driver : "none");
	}
	fprintf(f, "  kernel log: %s\n", h->kmsg.read ? "read" : h->kmsg.err ? "not readable" : "not read");
}

static void elf_brief(const struct ct_elfinfo *e, bool version, FILE *f)
{
	char fl[64];

	if (!e->ok) {
		fprintf(f, "%s", e->error);
		return;
	}
	fprintf(f, "%d-bit %s", e->elf_class, e->machine_name);
	if (e->soname[0])
		fprintf(f, ", SONAME %s", e->soname);
	if (version && e->version[0])
		fprintf(f, ", %s", e->version);
	if (e->size >= 1024 * 1024)
		fprintf(f, ", %.1f MB", (double)e->size / (1024.0 * 1024.0));
	else
		fprintf(f, ", %llu KB", (unsigned long long)(e->size / 1024));
	if (e->flags)
		fprintf(f, " [%s]", ct_elf_flags_str(e->flags, fl, sizeof fl));
}

static void search_text(const struct ct_libsearch *s, FILE *f)
{
	int shown = 0;

	fprintf(f, "  %s, in loader order:\n", s->name);
	for (int i = 0; i < s->n; i++) {
		const struct ct_libcand *k = &s->c[i];
		bool pick = k->state == CT_CAND_CHOSEN;

		fprintf(f, "    %s%-8s%s %-15s %s", pick ? ct_c(f, CT_C_BOLD) : "", ct_cand_state_name(k->state),
			pick ? ct_c(f, CT_C_RESET) : "", k->src == CT_SRC_OFF_PATH ? "" : ct_cand_src_name(k->src),
			k->path);
		if (k->elf.realpath[0] && strcmp(k->elf.realpath, k->elf.path))
			fprintf(f, " -> %s", k->elf.realpath);
		fputs("\n             ", f);
		elf_brief(&k->elf, true, f);
		if (k->note[0])
			fprintf(f, "; %s", k->note);
		fputc('\n', f);
		shown++;
	}
	if (!shown)
		fprintf(f, "    (not found anywhere)\n");
}

static void libs_text(const struct ct_machine_report *r, FILE *f)
{
	search_text(&r->cuda, f);
	search_text(&r->cuda_dev, f);
	search_text(&r->nvml, f);
	fprintf(f, "  libcudart:\n");
	if (!r->n_cudart)
		fprintf(f, "    (none found)\n");
	for (int i = 0; i < r->n_cudart; i++) {
		const struct ct_cudart *k = &r->cudart[i];
		char v[16];

		fprintf(f, "    %-15s %s", k->src, k->path);
		if (k->elf.realpath[0] && strcmp(k->elf.realpath, k->elf.path))
			fprintf(f, " -> %s", k->elf.realpath);
		if (k->cuda_version)
			fprintf(f, "\n             CUDA %s%s (from %s), ", ct_cuda_version_str(k->cuda_version, v, sizeof v),
				k->version_exact ? "" : ".x", k->version_from[0] ? k->version_from : "?");
		else
			fputs("\n             ", f);
		elf_brief(&k->elf, false, f);
		fputc('\n', f);
	}
}

static void container_text(const struct ct_container *k, FILE *f)
{
	char nnp[8];

	snprintf(nnp, sizeof nnp, "%d", k->no_new_privs);
	fprintf(f, "  /.dockerenv %s, /run/.containerenv %s, cgroup %s, NoNewPrivs %s\n",
		k->dockerenv ? "yes" : "no", k->containerenv ? "yes" : "no",
		!k->cgroup_read ? "unknown" : k->cgroup_v2 ? "v2" : "v1",
		k->no_new_privs < 0 ? "unknown" : nnp);
	if (k->pid1_cgroup[0])
		fprintf(f, "  /proc/1/cgroup: %s\n", k->pid1_cgroup);
}

static void env_text(const struct ct_machine_report *r, FILE *f)
{
	if (!r->n_env)
		fprintf(f, "  (no CUDA-related variable set)\n");
	for (int i = 0; i < r->n_env; i++)
		fprintf(f, "  %s=%s\n", r->env[i].name, r->env[i].value);
}

static void contract_text(FILE *f)
{
	fprintf(f, "  driver branch -> CUDA table: %s\n", ct_compat_table_source);
}

void ct_machine_report_text(const struct ct_machine_report *r, FILE *f)
{
	for (int s = 0; s < CT_SEC_COUNT; s++) {
		fprintf(f, "%s%s%s\n", ct_c(f, CT_C_BOLD), ct_section_title(s), ct_c(f, CT_C_RESET));
		switch (s) {
		case CT_SEC_DEVICES: nodes_text(r, f); break;
		case CT_SEC_KMOD:
			kmod_text(&r->kmod, f);
			hw_text(&r->hw, f);
			break;
		case CT_SEC_LIBS: libs_text(r, f); break;
		case CT_SEC_CONTAINER: container_text(&r->container, f); break;
		case CT_SEC_ENV: env_text(r, f); break;
		case CT_SEC_CONTRACT: contract_text(f); break;
		}
		findings_text(r, s, f);
		fputc('\n', f);
	}
}

/* ---- JSON ------------------------------------------------------------- */

static void kopt(struct ct_json *j, const char *k, const char *v)
{
	ct_json_key(j, k);
	if (v && *v)
		ct_json_str(j, v);
	else
		ct_json_null(j);
}

static void elf_json(struct ct_json *j, const struct ct_elfinfo *e)
{
	char fl[64];

	ct_json_obj_begin(j);
	ct_json_kbool(j, "ok", e->ok);
	kopt(j, "error", e->ok ? NULL : e->error);
	kopt(j, "realpath", e->realpath);
	ct_json_kuint(j, "size", e->size);
	if (e->ok) {
		ct_json_kint(j, "class", e->elf_class);
		ct_json_kstr(j, "machine", e->machine_name);
		ct_json_kint(j, "e_machine", e->machine);
		ct_json_kstr(j, "type", e->type_name);
		kopt(j, "soname", e->soname);
		kopt(j, "runpath", e->runpath);
		ct_json_kint(j, "needed", e->n_needed);
		ct_json_kint(j, "defined_symbols", e->n_defined);
		ct_json_kbool(j, "cuInit", e->has_cuInit);
		ct_json_kbool(j, "cuGetProcAddress_v2", e->has_cuGetProcAddress_v2);
		ct_json_kbool(j, "nvmlInit_v2", e->has_nvmlInit_v2);
		ct_json_kbool(j, "cudaRuntimeGetVersion", e->has_cudaRuntimeGetVersion);
	}
	kopt(j, "version", e->version);
	kopt(j, "version_from", e->version_from);
	ct_json_kbool(j, "stub", e->flags & CT_ELF_STUB);
	kopt(j, "stub_reason", e->why_stub);
	ct_json_kbool(j, "compat", e->flags & CT_ELF_COMPAT);
	ct_json_kbool(j, "host_dir", e->flags & CT_ELF_HOST);
	ct_json_kbool(j, "wrong_class", e->flags & CT_ELF_WRONG_CLASS);
	ct_json_kbool(j, "wrong_machine", e->flags & CT_ELF_WRONG_MACHINE);
	ct_json_kstr(j, "flags", ct_elf_flags_str(e->flags, fl, sizeof fl));
	ct_json_obj_end(j);
}

static void nodes_json(struct ct_json *j, const struct ct_machine_report *r)
{
	ct_json_key(j, "device_nodes");
	ct_json_arr_begin(j);
	for (int i = 0; i < r->n_nodes; i++) {
		const struct ct_devnode *n = &r->nodes[i];
		char mode[8];

		ct_json_obj_begin(j);
		ct_json_kstr(j, "path", n->path);
		ct_json_kstr(j, "role", n->role);
		ct_json_kbool(j, "required", n->required);
		ct_json_kbool(j, "exists", n->exists);
		if (n->exists) {
			snprintf(mode, sizeof mode, "%04o", n->mode);
			ct_json_kbool(j, "char_device", n->is_chr);
			ct_json_kint(j, "major", n->major);
			ct_json_kint(j, "minor", n->minor);
			ct_json_kint(j, "expected_major", n->exp_major);
			ct_json_kint(j, "expected_minor", n->exp_minor);
			ct_json_kbool(j, "numbers_ok", n->major_ok && n->minor_ok);
			ct_json_kstr(j, "mode", mode);
			ct_json_kstr(j, "owner", n->owner);
			ct_json_kstr(j, "group", n->group);
			ct_json_kbool(j, "in_group", n->group_member);
			if (n->open_tried) {
				ct_json_key(j, "open");
				ct_json_obj_begin(j);
				ct_json_kstr(j, "flags", n->open_mode);
				ct_json_kbool(j, "ok", n->open_errno == 0);
				kopt(j, "errno", n->open_errno ? ct_errno_name(n->open_errno) : NULL);
				ct_json_obj_end(j);
			}
		}
		ct_json_obj_end(j);
	}
	ct_json_arr_end(j);
	ct_json_kbool(j, "wsl", r->wsl);
}

static void kmod_json(struct ct_json *j, const struct ct_kmod *k)
{
	ct_json_key(j, "kernel_module");
	ct_json_obj_begin(j);
	kopt(j, "proc_version_line", k->proc_present ? k->proc_line : NULL);
	kopt(j, "version", k->version);
	ct_json_kstr(j, "flavor", k->flavor);
	kopt(j, "sys_version", k->sys_present ? k->sys_version : NULL);
	ct_json_kbool(j, "versions_disagree", k->versions_disagree);
	ct_json_kbool(j, "nvidia_loaded", k->nvidia_loaded);
	ct_json_kbool(j, "nvidia_uvm_loaded", k->uvm_loaded);
	ct_json_kbool(j, "nvidia_modeset_loaded", k->modeset_loaded);
	kopt(j, "uvm_disable_hmm", k->uvm_disable_hmm);
	ct_json_key(j, "proc_devices");
	ct_json_obj_begin(j);
	ct_json_kbool(j, "read", k->proc_devices_read);
	ct_json_kint(j, "nvidia", k->major_nvidia);
	ct_json_kint(j, "nvidiactl", k->major_nvidiactl);
	ct_json_kint(j, "nvidia-uvm", k->major_uvm);
	ct_json_kint(j, "nvidia-caps", k->major_caps);
	ct_json_obj_end(j);
	ct_json_kint(j, "gpu_count", k->gpu_count);
	ct_json_key(j, "gpus");
	ct_json_arr_begin(j);
	for (int i = 0; i < k->gpu_count && i < CT_MAX_GPUS; i++) {
		ct_json_obj_begin(j);
		ct_json_kstr(j, "bus", k->gpus[i].bus);
		kopt(j, "model", k->gpus[i].model);
		kopt(j, "uuid", k->gpus[i].uuid);
		ct_json_obj_end(j);
	}
	ct_json_arr_end(j);
	ct_json_key(j, "params");
	ct_json_obj_begin(j);
	for (int i = 0; i < k->n_params; i++)
		ct_json_kstr(j, k->params[i].name, k->params[i].value);
	ct_json_obj_end(j);
	ct_json_obj_end(j);
}

static void hw_json(struct ct_json *j, const struct ct_hw *h)
{
	ct_json_key(j, "hardware");
	ct_json_obj_begin(j);
	kopt(j, "kernel_release", h->kernel_release);
	kopt(j, "module_file", h->module_file);
	kopt(j, "dkms", h->dkms);
	ct_json_kint(j, "secure_boot", h->secure_boot);
	kopt(j, "lockdown", h->lockdown);
	kopt(j, "gsp_firmware_dir", h->fw_dir);
	ct_json_kint(j, "gsp_firmware_files", h->fw_count);
	ct_json_key(j, "pci");
	ct_json_arr_begin(j);
	for (int i = 0; i < h->n_pci; i++) {
		const struct ct_pcidev *g = &h->pci[i];
		char id[8];
		snprintf(id, sizeof id, "%04x", g->device);
		ct_json_obj_begin(j);
		ct_json_kstr(j, "address", g->addr);
		ct_json_kstr(j, "device", id);
		kopt(j, "chip", g->chip);
		kopt(j, "product", g->product);
		kopt(j, "architecture", g->arch);
		kopt(j, "driver", g->driver);
		ct_json_obj_end(j);
	}
	ct_json_arr_end(j);
	ct_json_kbool(j, "kernel_log_read", h->kmsg.read);
	ct_json_obj_end(j);
}

static void search_json(struct ct_json *j, const struct ct_libsearch *s)
{
	ct_json_key(j, s->name);
	ct_json_obj_begin(j);
	kopt(j, "chosen", s->chosen >= 0 ? s->c[s->chosen].path : NULL);
	kopt(j, "fails_at", s->fatal >= 0 ? s->c[s->fatal].path : NULL);
	ct_json_key(j, "candidates");
	ct_json_arr_begin(j);
	for (int i = 0; i < s->n; i++) {
		const struct ct_libcand *k = &s->c[i];
		ct_json_obj_begin(j);
		ct_json_kstr(j, "path", k->path);
		ct_json_kstr(j, "source", ct_cand_src_name(k->src));
		ct_json_kstr(j, "state", ct_cand_state_name(k->state));
		kopt(j, "note", k->note);
		ct_json_key(j, "elf");
		elf_json(j, &k->elf);
		ct_json_obj_end(j);
	}
	ct_json_arr_end(j);
	ct_json_obj_end(j);
}

static void libs_json(struct ct_json *j, const struct ct_machine_report *r)
{
	ct_json_key(j, "libraries");
	ct_json_obj_begin(j);
	search_json(j, &r->cuda);
	search_json(j, &r->cuda_dev);
	search_json(j, &r->nvml);
	ct_json_key(j, "libcudart");
	ct_json_arr_begin(j);
	for (int i = 0; i < r->n_cudart; i++) {
		const struct ct_cudart *k = &r->cudart[i];
		ct_json_obj_begin(j);
		ct_json_kstr(j, "path", k->path);
		ct_json_kstr(j, "source", k->src);
		ct_json_kbool(j, "loader_visible", k->loader_visible);
		ct_json_kint(j, "cuda_version", k->cuda_version);
		ct_json_kbool(j, "version_exact", k->version_exact);
		kopt(j, "version_from", k->version_from);
		ct_json_key(j, "elf");
		elf_json(j, &k->elf);
		ct_json_obj_end(j);
	}
	ct_json_arr_end(j);
	ct_json_obj_end(j);
}

static void container_json(struct ct_json *j, const struct ct_container *k)
{
	ct_json_key(j, "container");
	ct_json_obj_begin(j);
	ct_json_kbool(j, "in_container", k->in_container);
	ct_json_kbool(j, "dockerenv", k->dockerenv);
	ct_json_kbool(j, "containerenv", k->containerenv);
	kopt(j, "pid1_cgroup", k->pid1_cgroup);
	ct_json_key(j, "cgroup_v2");
	if (k->cgroup_read)
		ct_json_bool(j, k->cgroup_v2);
	else
		ct_json_null(j);
	kopt(j, "devices_list", k->devices_list);
	ct_json_key(j, "devices_allowed");
	if (k->devices_allowed < 0)
		ct_json_null(j);
	else
		ct_json_bool(j, k->devices_allowed);
	ct_json_kint(j, "no_new_privs", k->no_new_privs);
	kopt(j, "toolkit_files", k->toolkit_files);
	ct_json_obj_end(j);
}

static void contract_json(struct ct_json *j, const struct ct_machine_report *r)
{
	ct_json_key(j, "contract");
	ct_json_obj_begin(j);
	kopt(j, "driver_version", r->driver_version);
	kopt(j, "driver_version_from", r->driver_version_from);
	ct_json_kint(j, "driver_cuda_version", r->driver_cuda_version);
	ct_json_kbool(j, "compat_libcuda", r->compat_loaded);
	ct_json_kstr(j, "table_source", ct_compat_table_source);
	ct_json_key(j, "runtimes");
	ct_json_arr_begin(j);
	for (int i = 0; i < r->n_cudart; i++) {
		const struct ct_cudart *k = &r->cudart[i];
		if (!k->compat.name)
			continue;
		ct_json_obj_begin(j);
		ct_json_kstr(j, "path", k->path);
		ct_json_kint(j, "runtime_version", k->cuda_version);
		ct_json_kstr(j, "class", k->compat.name);
		ct_json_kbool(j, "ok", k->compat.ok);
		ct_json_kint(j, "expect_error", k->compat.expect_error);
		ct_json_kstr(j, "rule", k->compat.rule);
		ct_json_kstr(j, "detail", k->compat.detail);
		kopt(j, "fix", k->compat.fix);
		ct_json_obj_end(j);
	}
	ct_json_arr_end(j);
	ct_json_obj_end(j);
}

void ct_machine_report_json(const struct ct_machine_report *r, struct ct_json *j)
{
	kopt(j, "root", r->root);
	ct_json_kint(j, "uid", r->uid);
	nodes_json(j, r);
	kmod_json(j, &r->kmod);
	hw_json(j, &r->hw);
	libs_json(j, r);
	container_json(j, &r->container);
	ct_json_key(j, "environment");
	ct_json_obj_begin(j);
	for (int i = 0; i < r->n_env; i++)
		ct_json_kstr(j, r->env[i].name, r->env[i].value);
	ct_json_obj_end(j);
	contract_json(j, r);
	ct_json_key(j, "findings");
	ct_json_arr_begin(j);
	for (int i = 0; i < r->n_findings; i++) {
		const struct ct_finding *x = &r->findings[i];
		ct_json_obj_begin(j);
		ct_json_kstr(j, "section", ct_section_key(x->section));
		ct_json_kstr(j, "severity", ct_severity_name(x->sev));
		ct_json_kstr(j, "layer", ct_layer_name(x->layer));
		ct_json_kstr(j, "summary", x->summary);
		kopt(j, "fix", x->fix);
		ct_json_obj_end(j);
	}
	ct_json_arr_end(j);
}
