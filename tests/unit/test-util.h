/* test-util.h — small helpers the unit-test programs share. */
#pragma once

#include <dirent.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

/* Entries of a directory, without "." and "..". */
__attribute__((unused))
static size_t dir_entries(const char *path) {
        DIR *d = opendir(path);
        struct dirent *de;
        size_t n = 0;

        assert_non_null(d);
        while ((de = readdir(d)))
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
                        n++;
        closedir(d);
        return n;
}
