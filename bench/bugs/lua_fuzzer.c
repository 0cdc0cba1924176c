/* Magma's lua target runs the interpreter on a script file; this harness does the same in
 * process: the input is a script, run in a fresh state with the standard libraries, so that the
 * bugs in the debug library, the hooks and io.popen stay reachable. The library is built as ISO
 * C (no LUA_USE_POSIX), so io.popen raises an error after its mode check instead of starting a
 * shell, and package.loadlib loads nothing; what else reaches outside the process (commands,
 * writing or deleting files, exiting) is taken out of the state before the script runs. */
#include <fcntl.h>
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

static const char *const outside[][2] = {
    {"os", "execute"}, {"os", "exit"}, {"os", "remove"}, {"os", "rename"},
    {"os", "tmpname"}, {"io", "open"}, {"io", "output"}, {"package", "loadlib"},
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    /* Scripts print; the fuzzers' logs are on stderr. */
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) {
        dup2(null, STDOUT_FILENO);
        close(null);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    lua_State *L = luaL_newstate();
    if (L == NULL) return 0;
    luaL_openlibs(L);
    for (size_t i = 0; i < sizeof outside / sizeof outside[0]; i++) {
        if (lua_getglobal(L, outside[i][0]) == LUA_TTABLE) {
            lua_pushnil(L);
            lua_setfield(L, -2, outside[i][1]);
        }
        lua_pop(L, 1);
    }
    /* Text only, as the interpreter's seeds are: a binary chunk is trusted by lua's loader and
     * breaks it in ways that are no bug of lua's. */
    if (luaL_loadbufferx(L, (const char *)data, size, "=input", "t") == LUA_OK)
        lua_pcall(L, 0, 0, 0);
    lua_close(L);
    return 0;
}
