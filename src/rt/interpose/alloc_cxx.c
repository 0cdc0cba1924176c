/* C++'s operator new, wrapped as alloc.c wraps malloc: libstdc++'s own new calls malloc from
 * inside libstdc++, where the program's link cannot wrap it. A member of its own, so that only
 * programs that call new, and so link a C++ runtime, need the __real_ symbols. The mangled
 * names are those of new(size_t) and new[](size_t), with and without std::nothrow, on LP64. */
#include <stddef.h>

void __sift_malloc_check(size_t size);

void *__real__Znwm(size_t size);
void *__real__Znam(size_t size);
void *__real__ZnwmRKSt9nothrow_t(size_t size, const void *nothrow);
void *__real__ZnamRKSt9nothrow_t(size_t size, const void *nothrow);

void *__wrap__Znwm(size_t size)
{
    __sift_malloc_check(size);
    return __real__Znwm(size);
}

void *__wrap__Znam(size_t size)
{
    __sift_malloc_check(size);
    return __real__Znam(size);
}

void *__wrap__ZnwmRKSt9nothrow_t(size_t size, const void *nothrow)
{
    __sift_malloc_check(size);
    return __real__ZnwmRKSt9nothrow_t(size, nothrow);
}

void *__wrap__ZnamRKSt9nothrow_t(size_t size, const void *nothrow)
{
    __sift_malloc_check(size);
    return __real__ZnamRKSt9nothrow_t(size, nothrow);
}
