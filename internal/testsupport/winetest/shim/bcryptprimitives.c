/* A test-only bcryptprimitives.dll for Wine 8.0, which has none: the Go
   runtime (1.22 and later) loads ProcessPrng from it at start. This one
   exports ProcessPrng on top of RtlGenRandom (SystemFunction036). Built
   with mingw-w64 by winetest; never shipped. */
#include <windows.h>
BOOLEAN WINAPI SystemFunction036(PVOID, ULONG);
BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    while (len > 0) {
        ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;
        if (!SystemFunction036(data, n)) return FALSE;
        data += n; len -= n;
    }
    return TRUE;
}
