/*
 * stdio_strings.c: string, memory, ctype and conversion functions, the heap, files, stdin,
 * and setjmp/longjmp, all through msvcrt (built with -D__USE_MINGW_ANSI_STDIO=0).
 *
 * The test runs it with the arguments "alpha" "two words", RPT_SAMPLE_NAME=rpt in the
 * environment, a few lines on stdin, and an empty directory as the current directory (the
 * sandbox for rpt). stdout is switched to binary mode on Windows, so all three runs (rpt, Wine,
 * native i386) print the same bytes. Files are opened in binary mode for the same reason.
 * The exit status is 0 when every self-check passed, else 1.
 *
 * <errno.h> is left out: gcc-12-multilib has no i386 <asm/errno.h>, so errors are judged by
 * return values.
 */
#include <ctype.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _WIN32
#include <fcntl.h>
#include <io.h>
#endif

static unsigned checksum = 5381;
static int failures;

static void mix_text(const char *s)
{
    while (*s)
        checksum = checksum * 33 + (unsigned char)*s++;
}

/* Every line goes through here: printed, and folded into the checksum. */
static void say(const char *line)
{
    mix_text(line);
    fputs(line, stdout);
}

static void check(int ok, const char *what)
{
    if (!ok) {
        failures++;
        printf("FAILED: %s\n", what);
    }
}

static const char *const words[] = { " code", " runs everywhere" };

static void strings(void)
{
    char buf[200], other[64];
    strcpy(buf, "recompiled");
    strcat(buf, words[0]);
    /* Cutting the source short is the point here. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-truncation"
    strncat(buf, words[1], strlen(words[0]));
#pragma GCC diagnostic pop
    size_t len = strlen(buf);
    strncpy(other, buf, 4);
    other[4] = 0;
    const char *hay = "the quick brown fox jumps over the lazy dog";
    char line[512];
    sprintf(line, "strings: [%s] len=%u prefix=[%s] cmp=%d,%d,%d ncmp=%d\n", buf, (unsigned)len, other,
            strcmp("abc", "abd") < 0, strcmp("b", "a") > 0, strcmp("same", "same") == 0, strncmp("abcX", "abcY", 3));
    say(line);
    sprintf(line, "search: chr=%d rchr=%d str=%d spn=%u cspn=%u pbrk=%c\n", (int)(strchr(hay, 'q') - hay),
            (int)(strrchr(hay, 'o') - hay), (int)(strstr(hay, "lazy") - hay), (unsigned)strspn(hay, "the "),
            (unsigned)strcspn(hay, "xyz"), *strpbrk(hay, "jkl"));
    say(line);
    char tokens[] = "  one, two;three ,, four  ";
    int count = 0;
    line[0] = 0;
    for (char *t = strtok(tokens, " ,;"); t; t = strtok(NULL, " ,;")) {
        strcat(line, count++ ? "|" : "tokens: ");
        strcat(line, t);
    }
    strcat(line, "\n");
    say(line);
    char mem[32];
    memset(mem, '.', sizeof mem);
    memcpy(mem + 2, "abcdef", 6);
    memmove(mem + 4, mem + 2, 6);
    mem[12] = 0;
    sprintf(line, "memory: [%s] cmp=%d chr=%d\n", mem, memcmp("abc", "abd", 3) < 0,
            (int)((char *)memchr(mem, 'f', 12) - mem));
    say(line);
    check(len == 20 && strcmp(other, "reco") == 0, "string basics");
}

static void classes(void)
{
    unsigned sums[8] = { 0 };
    for (int c = 0; c < 128; c++) {
        sums[0] += isalpha(c) != 0;
        sums[1] += isdigit(c) != 0;
        sums[2] += isspace(c) != 0;
        sums[3] += ispunct(c) != 0;
        sums[4] += isxdigit(c) != 0;
        sums[5] += isupper(c) != 0;
        sums[6] += iscntrl(c) != 0;
        sums[7] += (isprint(c) != 0) * 2 + (isalnum(c) != 0);
    }
    char line[160], word[] = "Mixed Case 42!";
    for (char *p = word; *p; p++)
        *p = (char)(islower((unsigned char)*p) ? toupper((unsigned char)*p) : tolower((unsigned char)*p));
    sprintf(line, "ctype: alpha=%u digit=%u space=%u punct=%u xdigit=%u upper=%u cntrl=%u print/alnum=%u swap=[%s]\n",
            sums[0], sums[1], sums[2], sums[3], sums[4], sums[5], sums[6], sums[7], word);
    say(line);
}

static void conversions(void)
{
    char line[256], *end;
    long a = strtol("  -12345xyz", &end, 10);
    long b = strtol("0x7fff", NULL, 0);
    long c = strtol("0755", NULL, 0);
    long d = strtol("zz", NULL, 36);
    unsigned long e = strtoul("4294967295", NULL, 10);
    long f = strtol("99999999999", NULL, 10);
    long g = strtol("-99999999999", NULL, 10);
    sprintf(line, "convert: %ld rest=[%s] %ld %ld %ld %lu clamp=%ld,%ld atoi=%d atol=%ld\n", a, end, b, c, d, e, f, g,
            atoi("  +77 apples"), atol("-2147483648"));
    say(line);
    int i1 = 0, n = 0;
    unsigned x1 = 0;
    char s1[16] = "", s2[16] = "", ch = 0;
    int got = sscanf("  42 beef token Z abcxyz123", "%d %x %15s %c %15[a-z]%n", &i1, &x1, s1, &ch, s2, &n);
    sprintf(line, "sscanf: got=%d i=%d x=%u s=[%s] c=%c set=[%s] n=%d\n", got, i1, x1, s1, ch, s2, n);
    say(line);
    /* Set and read as bits only: the doubles pass through memory, never through the x87. */
    double dv[3];
    unsigned bits[6];
    memset(dv, 0, sizeof dv);
    got = sscanf("3.25 -2.5e3 0.1", "%lf %lf %lf", &dv[0], &dv[1], &dv[2]);
    memcpy(bits, dv, sizeof bits);
    sprintf(line, "sscanf: got=%d bits=%08x%08x %08x%08x %08x%08x\n", got, bits[1], bits[0], bits[3], bits[2], bits[5],
            bits[4]);
    say(line);
}

static void heap(void)
{
    char line[160];
    unsigned *v = NULL;
    size_t cap = 0, n = 0;
    unsigned sum = 0;
    for (unsigned i = 0; i < 5000; i++) {
        if (n == cap) {
            cap = cap ? cap * 2 : 4;
            unsigned *grown = realloc(v, cap * sizeof *v);
            check(grown != NULL, "realloc");
            v = grown;
        }
        v[n++] = i * i ^ 0x5a5a;
    }
    for (size_t i = 0; i < n; i++)
        sum += v[i] * (unsigned)(i + 1);
    free(v);
    int *zeros = calloc(1000, sizeof(int));
    int nonzero = 0;
    for (int i = 0; i < 1000; i++)
        nonzero += zeros[i] != 0;
    free(zeros);
    /* Many blocks of many sizes, freed in a scrambled order and allocated again. */
    char *blocks[256];
    for (int i = 0; i < 256; i++) {
        blocks[i] = malloc((size_t)(i * 37 % 300 + 1));
        memset(blocks[i], i, (size_t)(i * 37 % 300 + 1));
    }
    int intact = 1;
    for (int i = 0; i < 256; i++)
        intact &= blocks[i][i * 37 % 300] == (char)i;
    for (int i = 0; i < 256; i++)
        free(blocks[(i * 97) % 256]);
    char *dup = strdup("duplicate me");
    sprintf(line, "heap: n=%u sum=%08x calloc_nonzero=%d intact=%d dup=[%s]\n", (unsigned)n, sum, nonzero, intact, dup);
    free(dup);
    say(line);
    check(nonzero == 0 && intact, "heap");
}

static void files(void)
{
    char line[256], got[128];
    remove("sample-data.txt");
    FILE *f = fopen("sample-data.txt", "wb");
    check(f != NULL, "fopen for writing");
    if (!f)
        return;
    for (int i = 1; i <= 5; i++)
        fprintf(f, "line %d of %d: %s\n", i, 5, i % 2 ? "odd" : "even");
    fputs("tail without newline", f);
    long written = ftell(f);
    fclose(f);

    f = fopen("sample-data.txt", "rb");
    int lines = 0;
    unsigned h = 0;
    while (fgets(got, sizeof got, f)) {
        lines++;
        for (char *p = got; *p; p++)
            h = h * 31 + (unsigned char)*p;
    }
    int at_end = feof(f) != 0, error = ferror(f) != 0;
    fseek(f, 7, SEEK_SET);
    int c1 = fgetc(f);
    ungetc('#', f);
    int c2 = fgetc(f);
    fseek(f, -8, SEEK_END);
    size_t n = fread(got, 1, sizeof got - 1, f);
    got[n] = 0;
    long pos = ftell(f);
    rewind(f);
    int first = getc(f);
    fclose(f);
    sprintf(line, "files: wrote=%ld lines=%d hash=%08x eof=%d err=%d c=%c,%c tail=[%s] pos=%ld first=%c\n", written,
            lines, h, at_end, error, c1, c2, got, pos, first);
    say(line);

    f = fopen("sample-data.txt", "ab");
    fputs("+appended", f);
    fclose(f);
    check(rename("sample-data.txt", "sample-renamed.txt") == 0, "rename");
    f = fopen("sample-renamed.txt", "rb");
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fclose(f);
    /* freopen moves a FILE to another file; tmpfile leaves nothing behind. */
    FILE *moving = fopen("sample-a.txt", "wb");
    moving = freopen("sample-b.txt", "wb", moving);
    fputs("moved", moving);
    fclose(moving);
    FILE *temp = tmpfile();
    fputs("temporary", temp);
    rewind(temp);
    char temp_text[16] = "";
    fgets(temp_text, sizeof temp_text, temp);
    fclose(temp);
    moving = fopen("sample-b.txt", "rb");
    char moved_text[16] = "";
    fgets(moved_text, sizeof moved_text, moving);
    fclose(moving);
    int a_left = remove("sample-a.txt") == 0, b_left = remove("sample-b.txt") == 0;
    sprintf(line, "files: reopened=[%s] a=%d b=%d temp=[%s]\n", moved_text, a_left, b_left, temp_text);
    say(line);
    FILE *missing = fopen("sample-data.txt", "rb");
    int removed = remove("sample-renamed.txt");
    FILE *gone = fopen("sample-renamed.txt", "rb");
    sprintf(line, "files: size=%ld missing=%d removed=%d gone=%d\n", size, missing == NULL, removed, gone == NULL);
    say(line);
}

static void standard_input(void)
{
    char text[200], line[200];
    int lines = 0, words = 0;
    long total = 0;
    while (fgets(text, sizeof text, stdin)) {
        lines++;
        int in_word = 0;
        for (char *p = text; *p; p++) {
            if (isspace((unsigned char)*p)) {
                in_word = 0;
            } else if (!in_word) {
                in_word = 1;
                words++;
            }
        }
        long value;
        if (sscanf(text, "%ld", &value) == 1)
            total += value;
    }
    sprintf(line, "stdin: lines=%d words=%d total=%ld\n", lines, words, total);
    say(line);
}

/* A tiny calculator whose errors unwind with longjmp, as interpreters such as Lua do. */
static jmp_buf *error_target;
static const char *cursor;
static int depth_reached;

static void fail(int code)
{
    longjmp(*error_target, code);
}

static long expr(int depth);

static long atom(int depth)
{
    if (depth > depth_reached)
        depth_reached = depth;
    while (*cursor == ' ')
        cursor++;
    if (*cursor == '(') {
        cursor++;
        long v = expr(depth + 1);
        if (*cursor++ != ')')
            fail(2);
        return v;
    }
    if (*cursor == '-') {
        cursor++;
        return -atom(depth + 1);
    }
    if (!isdigit((unsigned char)*cursor))
        fail(3);
    long v = 0;
    while (isdigit((unsigned char)*cursor))
        v = v * 10 + (*cursor++ - '0');
    return v;
}

static long term(int depth)
{
    long v = atom(depth);
    for (;;) {
        while (*cursor == ' ')
            cursor++;
        char op = *cursor;
        if (op != '*' && op != '/' && op != '%')
            return v;
        cursor++;
        long r = atom(depth);
        if (op != '*' && r == 0)
            fail(4);
        v = op == '*' ? v * r : op == '/' ? v / r : v % r;
    }
}

static long expr(int depth)
{
    long v = term(depth);
    for (;;) {
        while (*cursor == ' ')
            cursor++;
        char op = *cursor;
        if (op != '+' && op != '-')
            return v;
        cursor++;
        long r = term(depth);
        v = op == '+' ? v + r : v - r;
    }
}

/* Evaluates one expression under its own jmp_buf; errors come back as codes. */
static int protected_eval(const char *text, long *result)
{
    jmp_buf here;
    jmp_buf *outer = error_target;
    volatile int code;
    error_target = &here;
    cursor = text;
    if ((code = setjmp(here)) == 0) {
        *result = expr(0);
        if (*cursor)
            fail(5);
    }
    error_target = outer;
    return code;
}

static void interpreter(void)
{
    static const char *const programs[] = {
        "1 + 2 * 3",
        "(((((((((((((((((((((7)))))))))))))))))))))",
        "100 / (5 - 5)",
        "2 * (3 + 4",
        "((2) + x)",
        "-(-(-(9))) * 11 % 7",
        "1 2",
        "((((((((((((((((((((((((((((((1+1))))))))))))))))))))))))))))))*3",
    };
    char line[160];
    jmp_buf top;
    error_target = &top;
    volatile unsigned rounds = 0;
    /* The outer setjmp sees a longjmp with value 0, which arrives as 1. */
    volatile int outer = setjmp(top);
    if (outer == 0) {
        for (unsigned i = 0; i < sizeof programs / sizeof programs[0]; i++) {
            long result = 0;
            depth_reached = 0;
            int code = protected_eval(programs[i], &result);
            sprintf(line, "eval: [%s] -> code=%d result=%ld depth=%d\n", programs[i], code, code ? 0L : result,
                    depth_reached);
            say(line);
            rounds++;
        }
        longjmp(top, 0);
    }
    sprintf(line, "eval: outer setjmp returned %d after %u rounds\n", outer, rounds);
    say(line);
}

/* setjmp again and again in one activation, each time jumped back to at once. */
static void setjmp_in_a_loop(void)
{
    jmp_buf again;
    volatile int total = 0, rounds = 0;
    char line[80];
    for (volatile int i = 0; i < 6; i++) {
        int got = setjmp(again);
        if (got == 0)
            longjmp(again, i + 10);
        total += got;
        rounds++;
    }
    sprintf(line, "loop: rounds=%d total=%d\n", rounds, total);
    say(line);
}

/* Thread-local data: mingw's __thread goes through libgcc's emulated TLS (TlsAlloc and friends). */
static __thread unsigned tls_counter = 40;

__attribute__((noinline)) static unsigned tls_bump(unsigned by)
{
    tls_counter += by;
    return tls_counter;
}

int main(int argc, char **argv)
{
#ifdef _WIN32
    _setmode(_fileno(stdout), _O_BINARY);
#endif
    char line[200];
    const char *name = getenv("RPT_SAMPLE_NAME");
    sprintf(line, "rpt msvcrt stdio sample: argc=%d args=[%s][%s] env=[%s]\n", argc, argc > 1 ? argv[1] : "",
            argc > 2 ? argv[2] : "", name ? name : "(unset)");
    say(line);
    strings();
    classes();
    conversions();
    heap();
    files();
    standard_input();
    interpreter();
    setjmp_in_a_loop();
    tls_bump(1);
    sprintf(line, "tls: %u\n", tls_bump(1));
    say(line);
    printf("done checksum=%08x failures=%d\n", checksum, failures);
    return failures ? 1 : 0;
}
