/*
 * The program entry of cutrace-probe on x86_64, in place of the C library's
 * crt1.o (the probe links with -nostartfiles).
 *
 * glibc 2.34's crt1.o calls __libc_start_main@GLIBC_2.34, so a program
 * linked on Debian 12 does not start on an older glibc ("version
 * `GLIBC_2.34' not found").  The probe is carried inside the one-file cutrace
 * and run in containers with glibc 2.17 to 2.33, so it calls the base
 * version, which every glibc exports.  The x86_64 process-entry state (SysV
 * psABI, section 3.4: %rsp -> argc, argv..., NULL, envp...; %rdx: the
 * loader's exit function) is handed over as that function's arguments:
 * main, argc, argv, init, fini, rtld_fini, stack_end.  init and fini are
 * NULL: the probe has no constructors of its own (glibc 2.34 and later then
 * runs the executable's init array itself; older ones run nothing for it).
 */
#if defined(__x86_64__)
__asm__(".symver __libc_start_main,__libc_start_main@GLIBC_2.2.5\n"
	"\t.text\n"
	"\t.globl _start\n"
	"\t.type _start,@function\n"
	"_start:\n"
	"\t.cfi_startproc\n"
	"\t.cfi_undefined rip\n"
	"\txor %ebp,%ebp\n"
	"\tmov %rdx,%r9\n"                 /* rtld_fini */
	"\tpop %rsi\n"                     /* argc */
	"\tmov %rsp,%rdx\n"                /* argv */
	"\tand $-16,%rsp\n"
	"\tpush %rax\n"                    /* keep the stack 16-byte aligned */
	"\tpush %rsp\n"                    /* stack_end (7th argument) */
	"\txor %r8d,%r8d\n"                /* fini */
	"\txor %ecx,%ecx\n"                /* init */
	"\tmov main@GOTPCREL(%rip),%rdi\n"
	"\tcall *__libc_start_main@GOTPCREL(%rip)\n"
	"\thlt\n"
	"\t.cfi_endproc\n"
	"\t.size _start,.-_start\n");
#else
#error "floor_start.c is for x86_64 only (tracer/CMakeLists.txt)"
#endif
