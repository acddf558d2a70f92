// cflags: -O2 -I/usr/include/python3.11
// ldflags: -lpython3.11
/*
 * mt_pyembed - CPython 3.11 with a shared libpython, built from Debian's
 * parts: this program links /usr/lib/x86_64-linux-gnu/libpython3.11.so.1.0
 * (package libpython3.11) and runs the interpreter's own main, as the
 * python3 of pyenv, python.org builds and the Docker images does
 * (Programs/python.c). Arguments are python3's: mt_pyembed SCRIPT ARGS...
 *
 * The interpreter, its allocator calls and its C API are in the library,
 * not in the executable, and the library is loaded before libc, so the
 * loader maps it above libc (tests/integration/test_python.py).
 */
#include <Python.h>

int main(int argc, char **argv)
{
	return Py_BytesMain(argc, argv);
}
