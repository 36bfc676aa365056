/*
 * Device node checks on a fake /dev made of real character device nodes.
 * mknod needs CAP_MKNOD: without it the whole program is skipped (77).
 */
#include "test_common.h"

#include <sys/sysmacros.h>

static void node(const char *rel, unsigned maj, unsigned min, mode_t mode)
{
	parent_dirs(T(rel));
	ck_assert_msg(mknod(T(rel), S_IFCHR | mode, makedev(maj, min)) == 0, "mknod %s: %s", rel,
		      strerror(errno));
	chmod(T(rel), mode);
}

static const struct ct_devnode *get(const struct ct_machine_report *r, const char *path)
{
	for (int i = 0; i < r->n_nodes; i++)
		if (!strcmp(r->nodes[i].path, path))
			return &r->nodes[i];
	return NULL;
}

static struct ct_machine_report *check(bool open_nodes)
{
	static char *env[] = { NULL };
	static const char *const none[] = { NULL };
	struct ct_machine_opts o = {
		.root = tmp_root, .env = env, .ld_cache = "", .system_dirs = none,
		.off_path_dirs = none, .cudart_dirs = none, .no_open = !open_nodes, .no_python = true,
	};
	struct ct_machine_report *r = calloc(1, sizeof *r);
	ck_assert_ptr_nonnull(r);
	ct_machine_check(r, &o);
	return r;
}

/* /proc/devices as on the 580 machine, but nvidia-uvm at 237 while the
 * node says 238; /dev/nvidia1 with a wrong minor */
START_TEST(t_dev_numbers)
{
	struct ct_machine_report *r;
	const struct ct_devnode *n;

	write_str(T("/proc/devices"), "Character devices:\n195 nvidia\n195 nvidiactl\n237 nvidia-uvm\n"
		  "241 nvidia-caps\n");
	node("/dev/nvidiactl", 195, 255, 0666);
	node("/dev/nvidia0", 195, 0, 0660);
	node("/dev/nvidia1", 195, 7, 0666);
	node("/dev/nvidia-uvm", 238, 0, 0666);
	node("/dev/nvidia-caps/nvidia-cap1", 241, 1, 0400);
	r = check(false);
	n = get(r, "/dev/nvidiactl");
	ck_assert(n && n->exists && n->is_chr);
	ck_assert_uint_eq(n->major, 195);
	ck_assert_uint_eq(n->minor, 255);
	ck_assert(n->major_ok && n->minor_ok);
	ck_assert_uint_eq(n->mode, 0666);
	n = get(r, "/dev/nvidia0");
	ck_assert(n && n->is_chr && n->major_ok && n->minor_ok);
	ck_assert_uint_eq(n->mode, 0660);
	ck_assert_str_eq(n->role, "gpu");
	n = get(r, "/dev/nvidia1");
	ck_assert(n && !n->minor_ok);
	n = get(r, "/dev/nvidia-uvm");
	ck_assert(n && n->is_chr && !n->major_ok);
	ck_assert_int_eq(n->exp_major, 237);
	n = get(r, "/dev/nvidia-caps/nvidia-cap1");
	ck_assert(n && n->major_ok && n->minor_ok);
	ck_assert_str_eq(n->open_mode, "O_RDONLY");
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_DEVICE_NODE, "/dev/nvidia1 is c 195:7, expected 195:1");
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_DEVICE_NODE, "/dev/nvidia-uvm is c 238:0, expected 237:0");
	CK_FIND(r, CT_SEV_INFO, CT_LAYER_UVM, "nvidia-uvm-tools is missing");
	CK_NOFIND(r, CT_SEV_PROBLEM, CT_LAYER_DEVICE_NODE, "nvidiactl");
	free(r);
}
END_TEST

/* a real open: no driver serves 195:255 here (ENXIO), or the file system
 * refuses device nodes (EACCES on nodev): either way a recorded errno */
START_TEST(t_dev_open)
{
	struct ct_machine_report *r;
	const struct ct_devnode *n;
	int fd;

	write_str(T("/proc/devices"), "Character devices:\n195 nvidia\n195 nvidiactl\n238 nvidia-uvm\n");
	node("/dev/nvidiactl", 195, 255, 0666);
	node("/dev/nvidia0", 195, 0, 0666);
	node("/dev/nvidia-uvm", 238, 0, 0666);
	node("/dev/nvidia-uvm-tools", 238, 1, 0666);
	fd = open(T("/dev/nvidiactl"), O_RDWR);
	if (fd >= 0) {          /* a real driver behind 195:255: nothing to assert */
		close(fd);
		return;
	}
	r = check(true);
	n = get(r, "/dev/nvidiactl");
	ck_assert(n->open_tried);
	ck_assert_int_ne(n->open_errno, 0);
	ck_assert_str_eq(n->open_mode, "O_RDWR");
	CK_FIND(r, CT_SEV_PROBLEM, CT_LAYER_DEVICE_NODE, "cannot open /dev/nvidiactl");
	free(r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("doctor-devices");
	TCase *tc = tcase_create("nodes");
	SRunner *sr;
	int failed;
	char probe[PATH_MAX];

	/* can this process create a character device at all?  (no ck_assert
	 * outside a test) */
	snprintf(probe, sizeof probe, "%s/ct-doctor-mknod-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (!mkdtemp(probe))
		return 2;
	strcat(probe, "/n");
	if (mknod(probe, S_IFCHR | 0600, makedev(1, 3)) != 0) {
		fprintf(stderr, "mknod: %s: device node tests skipped\n", strerror(errno));
		*strrchr(probe, '/') = 0;
		rmdir(probe);
		return 77;
	}
	unlink(probe);
	*strrchr(probe, '/') = 0;
	rmdir(probe);

	tcase_add_checked_fixture(tc, tree_setup, tree_teardown);
	tcase_add_test(tc, t_dev_numbers);
	tcase_add_test(tc, t_dev_open);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
