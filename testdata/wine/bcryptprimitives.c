/*
 * bcryptprimitives.dll for Wine 8, which lacks ProcessPrng: the Go runtime
 * (1.24 and later) gets its random bytes from it on Windows and will not
 * start without it. This one takes them from RtlGenRandom. `make test-wine`
 * builds it with mingw-w64 and puts it in the Wine prefix; it is needed for
 * nothing else.
 */
#include <windows.h>

typedef BOOLEAN(WINAPI *rtlgenrandom)(PVOID, ULONG);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
	static rtlgenrandom gen;
	if (!gen)
		gen = (rtlgenrandom)GetProcAddress(LoadLibraryA("advapi32.dll"), "SystemFunction036");
	while (len > 0) {
		ULONG n = len > 0x10000000 ? 0x10000000 : (ULONG)len;
		if (!gen(data, n))
			return FALSE;
		data += n;
		len -= n;
	}
	return TRUE;
}
