/*
 * qsort_mingw.c: qsort and bsearch calling back into the program, atexit handlers and exit(),
 * printed with mingw's own printf (built without -D__USE_MINGW_ANSI_STDIO=0, so the formatting
 * code is part of the PE and is lifted like the rest of the program).
 *
 * Every comparator is a total order (ties broken by a unique id), so the sorted output does not
 * depend on how qsort is implemented. stdout is binary on Windows, so line ends agree with the
 * native build. The program ends through exit(3) after its atexit handlers ran, newest first.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#include <fcntl.h>
#include <io.h>
#endif

struct record {
    char name[12];
    int score;
    unsigned id;
};

static unsigned calls;

static int by_score_then_name(const void *a, const void *b)
{
    const struct record *x = a, *y = b;
    calls++;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    int c = strcmp(x->name, y->name);
    if (c)
        return c;
    return x->id < y->id ? -1 : x->id > y->id;
}

static int ascending(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

static int by_string(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static unsigned state = 2463534242u;

static unsigned next(void)
{
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    return state;
}

static void records(void)
{
    static const char *const names[] = { "ada", "bo", "cy", "dee", "eli", "fay", "gus", "hal" };
    struct record r[40];
    for (unsigned i = 0; i < 40; i++) {
        strcpy(r[i].name, names[next() % 8]);
        r[i].score = (int)(next() % 7) - 3;
        r[i].id = i;
    }
    qsort(r, 40, sizeof r[0], by_score_then_name);
    printf("records:");
    for (unsigned i = 0; i < 40; i++)
        printf(" %s%+d#%u", r[i].name, r[i].score, r[i].id);
    printf("\n");
    int sorted = 1;
    for (unsigned i = 1; i < 40; i++)
        sorted &= by_score_then_name(&r[i - 1], &r[i]) < 0;
    printf("records: sorted=%d comparator_called=%s\n", sorted, calls > 40 ? "yes" : "no");
}

static void numbers(void)
{
    int v[500];
    for (unsigned i = 0; i < 500; i++)
        v[i] = (int)(next() % 20001) - 10000;
    qsort(v, 500, sizeof v[0], ascending);
    long sum = 0;
    for (unsigned i = 0; i < 500; i++)
        sum += (long)v[i] * (long)(i % 13);
    int key = v[123], misses = 0, hits = 0;
    for (int k = -10000; k <= 10000; k += 37) {
        int *found = bsearch(&k, v, 500, sizeof v[0], ascending);
        if (found)
            hits += *found == k;
        else
            misses++;
    }
    int *at = bsearch(&key, v, 500, sizeof v[0], ascending);
    printf("numbers: min=%d max=%d median=%d weighted=%ld hits=%d misses=%d key_found=%d\n", v[0], v[499], v[250],
           sum, hits, misses, at != NULL && *at == key);
}

static void strings(void)
{
    const char *words[] = { "pear", "apple", "fig", "banana", "cherry", "date", "elderberry", "grape", "kiwi", "lime" };
    qsort(words, 10, sizeof words[0], by_string);
    printf("strings:");
    for (unsigned i = 0; i < 10; i++)
        printf(" %s", words[i]);
    printf("\n");
}

static void first_registered(void)
{
    printf("atexit: first registered, runs last\n");
    fflush(stdout);
}

static void second_registered(void)
{
    printf("atexit: second registered, runs first\n");
}

int main(void)
{
#ifdef _WIN32
    _setmode(_fileno(stdout), _O_BINARY);
#endif
    printf("rpt qsort sample (%s printf)\n", "mingw");
    atexit(first_registered);
    atexit(second_registered);
    records();
    numbers();
    strings();
    printf("exiting with 3\n");
    exit(3);
}
