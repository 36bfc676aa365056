#!/usr/bin/env python3
"""ctypes_probe: the driver reached from Python the way ctypes users (and
PyTorch's early probes) do it: CDLL("libcuda.so.1") and plain calls.
Lines printed: "NAME=RESULT [key=value]".  Exit 0 iff cuInit succeeded,
3 if libcuda could not be loaded."""
import ctypes
import sys


def main():
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        print("dlopen=error %s" % e)
        return 3
    r = cuda.cuInit(0)
    print("cuInit=%d" % r)
    v = ctypes.c_int(0)
    rv = cuda.cuDriverGetVersion(ctypes.byref(v))
    print("cuDriverGetVersion=%d version=%d" % (rv, 0 if rv else v.value))
    n = ctypes.c_int(0)
    rc = cuda.cuDeviceGetCount(ctypes.byref(n))
    print("cuDeviceGetCount=%d count=%d" % (rc, 0 if rc else n.value))
    return 0 if r == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
