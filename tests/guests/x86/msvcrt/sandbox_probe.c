/*
 * sandbox_probe.c: tries to reach files outside rpt's sandbox (a test fixture, built at test
 * time; see tests/msvcrt_samples.rs). argv[1] is the host's absolute path of a file outside the
 * sandbox. Each attempt prints one line: "ok" with what it read, or "refused".
 */
#include <stdio.h>
#include <string.h>

static void try_read(const char *path)
{
    char text[64] = "";
    FILE *f = fopen(path, "rb");
    if (!f) {
        printf("read %s: refused\n", path);
        return;
    }
    size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = 0;
    fclose(f);
    printf("read %s: ok [%s]\n", path, text);
}

static void try_write(const char *path)
{
    FILE *f = fopen(path, "wb");
    printf("write %s: %s\n", path, f ? "ok" : "refused");
    if (f) {
        fputs("written", f);
        fclose(f);
    }
}

int main(int argc, char **argv)
{
    try_read("data/in.txt");
    try_read("C:\\data\\in.txt");
    try_read("/data/in.txt");
    try_read("data\\..\\data\\.\\\\in.txt");
    try_read("../outside/secret.txt");
    try_read("..\\outside\\secret.txt");
    try_read("C:\\..\\outside\\secret.txt");
    try_read("data/../../outside/secret.txt");
    try_read("\\\\server\\share\\secret.txt");
    try_read(argc > 1 ? argv[1] : "");
    try_read("link.txt");
    try_read("linkdir/secret.txt");
    try_write("../escaped.txt");
    try_write("linkdir/escaped.txt");
    try_write("data/new.txt");
    printf("rename out: %s\n", rename("data/new.txt", "../moved.txt") ? "refused" : "ok");
    printf("remove out: %s\n", remove("../outside/secret.txt") ? "refused" : "ok");
    printf("remove link: %s\n", remove("link.txt") ? "refused" : "ok");
    return 0;
}
