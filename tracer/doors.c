/*
 * The main() of the door checks (tracer/CMakeLists.txt, cutrace_doors):
 * each links every object of one room with only the rooms below it, so
 * that a call into a room above it fails to link.  Never run.
 */
int main(void)
{
	return 0;
}
