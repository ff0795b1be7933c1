/*
 * bsnes_oracle: runs a Super Famicom ROM in a libretro core (bsnes-mercury, bsnes v094) for a
 * number of frames with a scripted joypad, and prints a hash of the guest-visible memories after
 * every frame, so a recompiled SNES program can be compared with it frame by frame.
 *
 *   bsnes_oracle <core.so> <rom.sfc> <frames> [--input script.txt]
 *                [--dump-frame N --dump-file out.bin] [--zero-wram LO-HI]...
 *
 * Output, one line per retro_run (frame 0 is the state after the first retro_run):
 *
 *   <frame> wram:<16 hex> vram:<16 hex> cgram:<16 hex> oam:<16 hex>
 *
 * Each hash is FNV-1a 64 (offset basis 0xcbf29ce484222325, prime 0x100000001b3) over the region's
 * bytes. A dump is WRAM (131072 bytes), VRAM (65536), CGRAM (512) and OAM (544), concatenated in
 * that order. framework/testkit/src/bsnes.rs documents both for the recompiled side, and what the
 * frame boundary is.
 *
 * Input script: `#` starts a comment, blank lines are ignored, every other line is
 * `<frame> <hex16>` (frame decimal, value hexadecimal with or without 0x), frames increasing:
 * from that retro_run on, joypad 1 holds the value, laid out as the auto-joypad read delivers it
 * in $4219:$4218 (bit 15 B, 14 Y, 13 Select, 12 Start, 11 Up, 10 Down, 9 Left, 8 Right, 7 A,
 * 6 X, 5 L, 4 R; bits 3-0 are the controller's signature and must be 0; Up with Down or Left
 * with Right is refused, since bsnes drops both of such a pair where a real joypad reports both).
 *
 * Determinism: bsnes v094 fills WRAM, VRAM, OAM, CGRAM and more at power-on from a generator
 * seeded with time(0). This program defines time() itself and is linked with -rdynamic, so the
 * core, which it loads with dlopen, binds to this time() and always sees ORACLE_TIME: every run of
 * the same ROM and script gives the same frames. The state of each frame is read in a forked
 * child (see in_child), so the run itself is never disturbed by retro_serialize.
 */

#define _POSIX_C_SOURCE 200809L

#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- The few libretro declarations this front-end needs. ---- */

enum {
    ENV_GET_OVERSCAN = 2,
    ENV_GET_SYSTEM_DIRECTORY = 9,
    ENV_SET_PIXEL_FORMAT = 10,
    ENV_GET_VARIABLE = 15,
    ENV_GET_VARIABLE_UPDATE = 17,
    ENV_GET_LOG_INTERFACE = 27,
    ENV_GET_SAVE_DIRECTORY = 31,
    /* Cores may or this into a command; it does not change its meaning here. */
    ENV_EXPERIMENTAL = 0x10000,
};

enum { MEMORY_SYSTEM_RAM = 2, MEMORY_VIDEO_RAM = 3 };
enum { DEVICE_JOYPAD = 1 };
enum { LOG_WARN = 2 };

struct game_info {
    const char *path;
    const void *data;
    size_t size;
    const char *meta;
};

struct system_av_info {
    unsigned base_width, base_height, max_width, max_height;
    float aspect_ratio;
    double fps, sample_rate;
};

typedef void (*log_printf_fn)(int level, const char *fmt, ...);
struct log_callback {
    log_printf_fn log;
};

typedef bool (*environment_fn)(unsigned cmd, void *data);
typedef void (*video_refresh_fn)(const void *data, unsigned width, unsigned height, size_t pitch);
typedef void (*audio_sample_fn)(int16_t left, int16_t right);
typedef size_t (*audio_batch_fn)(const int16_t *data, size_t frames);
typedef void (*input_poll_fn)(void);
typedef int16_t (*input_state_fn)(unsigned port, unsigned device, unsigned index, unsigned id);

struct core {
    void *handle;
    void (*set_environment)(environment_fn);
    void (*set_video_refresh)(video_refresh_fn);
    void (*set_audio_sample)(audio_sample_fn);
    void (*set_audio_sample_batch)(audio_batch_fn);
    void (*set_input_poll)(input_poll_fn);
    void (*set_input_state)(input_state_fn);
    void (*set_controller_port_device)(unsigned port, unsigned device);
    void (*init)(void);
    void (*deinit)(void);
    bool (*load_game)(const struct game_info *);
    void (*unload_game)(void);
    void (*get_system_av_info)(struct system_av_info *);
    void (*run)(void);
    size_t (*serialize_size)(void);
    bool (*serialize)(void *data, size_t size);
    void *(*get_memory_data)(unsigned id);
    size_t (*get_memory_size)(unsigned id);
};

/* ---- Sizes of the regions, and the layout of the serialized PPU. ---- */

#define WRAM_SIZE 131072u
#define VRAM_SIZE 65536u
#define CGRAM_SIZE 512u
#define OAM_SIZE 544u

/*
 * bsnes v094's PPU::serialize writes vram, then oam, then cgram, back to back, so OAM starts
 * right after VRAM in the state blob and CGRAM right after OAM. The calibration ROM
 * (framework/testkit/bsnes/calibrate/) writes a known pattern into all 544 bytes of OAM and all
 * 512 of CGRAM, and framework/testkit/tests/bsnes.rs checks that these offsets find exactly
 * those bytes (OAM byte for byte; CGRAM with bit 7 of every odd byte clear, as the PPU stores it).
 */
#define OAM_AFTER_VRAM VRAM_SIZE
#define CGRAM_AFTER_VRAM (VRAM_SIZE + OAM_SIZE)

/* The seed time() hands the core; see the header comment. */
#define ORACLE_TIME ((time_t)0)

time_t time(time_t *out) {
    if (out) {
        *out = ORACLE_TIME;
    }
    return ORACLE_TIME;
}

/* ---- The input script. ---- */

struct input_change {
    unsigned long frame;
    uint16_t buttons;
};

static struct input_change *changes;
static size_t change_count;
static unsigned long current_frame;

/* True in a child of in_child, which must leave without running the core's exit handlers. */
static bool is_child;

static void fail(const char *fmt, ...) {
    va_list args;
    va_start(args, fmt);
    fputs("bsnes_oracle: ", stderr);
    vfprintf(stderr, fmt, args);
    fputc('\n', stderr);
    va_end(args);
    if (is_child) {
        fflush(stderr);
        _exit(1);
    }
    exit(1);
}

/* Parses an unsigned decimal or hexadecimal number made of all of `text` (digits only, no sign,
 * space or prefix); false if it is not one. */
static bool parse_number(const char *text, int base, unsigned long *out) {
    const char *digits = base == 16 ? "0123456789abcdefABCDEF" : "0123456789";
    if (*text == '\0' || strspn(text, digits) != strlen(text)) {
        return false;
    }
    char *end;
    errno = 0;
    unsigned long value = strtoul(text, &end, base);
    if (errno != 0 || *end != '\0') {
        return false;
    }
    *out = value;
    return true;
}

static void read_input_script(const char *path) {
    FILE *file = fopen(path, "r");
    if (!file) {
        fail("%s: %s", path, strerror(errno));
    }
    char line[512];
    unsigned long line_number = 0;
    size_t capacity = 0;
    while (fgets(line, sizeof line, file)) {
        line_number++;
        if (!strchr(line, '\n') && !feof(file)) {
            fail("%s:%lu: line longer than %zu characters", path, line_number, sizeof line - 2);
        }
        char *comment = strchr(line, '#');
        if (comment) {
            *comment = '\0';
        }
        char *words[3];
        size_t count = 0;
        for (char *word = strtok(line, " \t\r\n"); word; word = strtok(NULL, " \t\r\n")) {
            if (count < 3) {
                words[count] = word;
            }
            count++;
        }
        if (count == 0) {
            continue;
        }
        if (count != 2) {
            fail("%s:%lu: expected `<frame> <hex16>`", path, line_number);
        }
        unsigned long frame, value;
        if (!parse_number(words[0], 10, &frame)) {
            fail("%s:%lu: `%s` is not a decimal frame number", path, line_number, words[0]);
        }
        const char *hex = words[1];
        if (hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X')) {
            hex += 2;
        }
        if (!parse_number(hex, 16, &value) || value > 0xffff) {
            fail("%s:%lu: `%s` is not a 16-bit hexadecimal value", path, line_number, words[1]);
        }
        if (value & 0xf) {
            fail("%s:%lu: bits 3-0 of `%s` are the joypad's signature and must be 0", path, line_number,
                 words[1]);
        }
        if ((value & 0x0c00) == 0x0c00 || (value & 0x0300) == 0x0300) {
            /* bsnes v094 reads neither of two opposite directions held together, where a real
             * joypad reads both: such a script would mean different things to the two sides. */
            fail("%s:%lu: `%s` holds Up and Down or Left and Right together, which bsnes reads as "
                 "neither",
                 path, line_number, words[1]);
        }
        if (change_count > 0 && frame <= changes[change_count - 1].frame) {
            fail("%s:%lu: frame %lu does not come after frame %lu", path, line_number, frame,
                 changes[change_count - 1].frame);
        }
        if (change_count == capacity) {
            capacity = capacity ? capacity * 2 : 16;
            changes = realloc(changes, capacity * sizeof *changes);
            if (!changes) {
                fail("out of memory");
            }
        }
        changes[change_count].frame = frame;
        changes[change_count].buttons = (uint16_t)value;
        change_count++;
    }
    if (ferror(file)) {
        fail("%s: read error", path);
    }
    fclose(file);
}

/* The buttons joypad 1 holds during retro_run number `frame`: the last change at or before it. */
static uint16_t buttons_at(unsigned long frame) {
    uint16_t buttons = 0;
    for (size_t i = 0; i < change_count && changes[i].frame <= frame; i++) {
        buttons = changes[i].buttons;
    }
    return buttons;
}

/* ---- Callbacks. ---- */

static void quiet_log(int level, const char *fmt, ...) {
    /* The core logs its BML map and every load step at INFO; only warnings and errors matter. */
    if (level < LOG_WARN) {
        return;
    }
    va_list args;
    va_start(args, fmt);
    fputs("bsnes: ", stderr);
    vfprintf(stderr, fmt, args);
    va_end(args);
}

static bool environment(unsigned cmd, void *data) {
    switch (cmd & ~(unsigned)ENV_EXPERIMENTAL) {
    case ENV_GET_SYSTEM_DIRECTORY:
    case ENV_GET_SAVE_DIRECTORY:
        /* No directory: a plain cartridge needs no firmware, and nothing is saved. */
        *(const char **)data = NULL;
        return true;
    case ENV_SET_PIXEL_FORMAT:
        return true;
    case ENV_GET_LOG_INTERFACE:
        ((struct log_callback *)data)->log = quiet_log;
        return true;
    case ENV_GET_OVERSCAN:
    case ENV_GET_VARIABLE:
    case ENV_GET_VARIABLE_UPDATE:
    default:
        /* Unanswered, the core keeps its defaults: no overscan, the accuracy settings. */
        return false;
    }
}

static void video_refresh(const void *data, unsigned width, unsigned height, size_t pitch) {
    (void)data, (void)width, (void)height, (void)pitch;
}

static void audio_sample(int16_t left, int16_t right) { (void)left, (void)right; }

static size_t audio_sample_batch(const int16_t *data, size_t frames) {
    (void)data;
    return frames;
}

static void input_poll(void) {}

/*
 * Joypad latches in the current retro_run. The auto-joypad read latches at the start of vertical
 * blank, the moment bsnes also ends a frame; which comes first depends on where the CPU is in its
 * instruction, so now and again a run ends just after the latch instead of just before it
 * (measured: run 559 of tests/guests/snes/nmi.sfc holds two latches and run 560 none). A second
 * latch in one run is therefore the next frame's. The one run that holds two vblanks by right,
 * the frame a program turns NMI off in (225 to 241 of the next video frame), reads the next
 * frame's value at its second latch too: a corner the recompiled platform does not share (it
 * gives both latches that frame's value) and no sample reaches.
 */
static unsigned latches_this_run;

static int16_t input_state(unsigned port, unsigned device, unsigned index, unsigned id) {
    (void)index;
    /* libretro's joypad ids 0-11 are B Y Select Start Up Down Left Right A X L R, which is the
     * order the SNES shifts them out in: id n is bit 15-n of $4219:$4218. */
    if (port != 0 || device != DEVICE_JOYPAD || id > 11) {
        return 0;
    }
    /* A latch reads B (id 0) first. */
    if (id == 0) {
        latches_this_run++;
    }
    unsigned long frame = current_frame + (latches_this_run > 1 ? 1 : 0);
    return (int16_t)((buttons_at(frame) >> (15 - id)) & 1);
}

/* ---- Loading. ---- */

static void *symbol(void *handle, const char *core_path, const char *name) {
    void *address = dlsym(handle, name);
    if (!address) {
        fail("%s: no symbol %s", core_path, name);
    }
    return address;
}

static struct core load_core(const char *path) {
    struct core core;
    core.handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!core.handle) {
        fail("cannot load the core: %s", dlerror());
    }
    /* POSIX lets a data pointer from dlsym be converted to a function pointer. */
#define LOAD(field, name) *(void **)&core.field = symbol(core.handle, path, name)
    LOAD(set_environment, "retro_set_environment");
    LOAD(set_video_refresh, "retro_set_video_refresh");
    LOAD(set_audio_sample, "retro_set_audio_sample");
    LOAD(set_audio_sample_batch, "retro_set_audio_sample_batch");
    LOAD(set_input_poll, "retro_set_input_poll");
    LOAD(set_input_state, "retro_set_input_state");
    LOAD(set_controller_port_device, "retro_set_controller_port_device");
    LOAD(init, "retro_init");
    LOAD(deinit, "retro_deinit");
    LOAD(load_game, "retro_load_game");
    LOAD(unload_game, "retro_unload_game");
    LOAD(get_system_av_info, "retro_get_system_av_info");
    LOAD(run, "retro_run");
    LOAD(serialize_size, "retro_serialize_size");
    LOAD(serialize, "retro_serialize");
    LOAD(get_memory_data, "retro_get_memory_data");
    LOAD(get_memory_size, "retro_get_memory_size");
#undef LOAD
    return core;
}

static unsigned char *read_file(const char *path, size_t *size) {
    FILE *file = fopen(path, "rb");
    if (!file) {
        fail("%s: %s", path, strerror(errno));
    }
    size_t capacity = 1 << 20, length = 0;
    unsigned char *bytes = malloc(capacity);
    for (;;) {
        if (!bytes) {
            fail("out of memory reading %s", path);
        }
        length += fread(bytes + length, 1, capacity - length, file);
        if (length < capacity) {
            break;
        }
        capacity *= 2;
        bytes = realloc(bytes, capacity);
    }
    if (ferror(file)) {
        fail("%s: read error", path);
    }
    fclose(file);
    *size = length;
    return bytes;
}

/* ---- The regions. ---- */

struct regions {
    unsigned char *wram, *vram;
    unsigned char *blob;
    size_t blob_size;
    size_t vram_in_blob;
};

static uint64_t fnv1a64(const unsigned char *bytes, size_t size) {
    uint64_t hash = 0xcbf29ce484222325u;
    for (size_t i = 0; i < size; i++) {
        hash = (hash ^ bytes[i]) * 0x100000001b3u;
    }
    return hash;
}

static void serialize(const struct core *core, struct regions *regions) {
    if (!core->serialize(regions->blob, regions->blob_size)) {
        fail("retro_serialize failed");
    }
}

/*
 * Runs `child` in a copy of this process and waits for it. retro_serialize first runs every
 * thread of the emulator to its next synchronization point: the CPU to the end of its instruction,
 * but the PPU to the start of its next scanline, so a serialization in the middle of a run moves
 * the PPU up to a line ahead of the CPU, which a program can see (the H/V counters latched through
 * $2137 read the PPU's). Serializing only in a forked child leaves the emulation of this process
 * exactly as a front-end that never serializes would see it.
 */
static void in_child(void (*child)(const struct core *, struct regions *, int), const struct core *core,
                     struct regions *regions, int out) {
    if (fflush(stdout) != 0) {
        fail("writing the output: %s", strerror(errno));
    }
    pid_t pid = fork();
    if (pid < 0) {
        fail("fork: %s", strerror(errno));
    }
    if (pid == 0) {
        is_child = true;
        child(core, regions, out);
        if (fflush(stdout) != 0) {
            fail("writing the output: %s", strerror(errno));
        }
        _exit(0);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0) {
        if (errno != EINTR) {
            fail("waitpid: %s", strerror(errno));
        }
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        /* The child has said why on stderr. */
        exit(1);
    }
}

/*
 * Finds where VRAM lies in the serialized state, in a child (see in_child): fills the live VRAM
 * with a pattern no program puts there, serializes, looks for the pattern and writes its offset
 * to `out`.
 */
static void find_vram_in_blob(const struct core *core, struct regions *regions, int out) {
    unsigned char *pattern = malloc(VRAM_SIZE);
    if (!pattern) {
        fail("out of memory");
    }
    uint64_t x = 0x9e3779b97f4a7c15u;
    for (size_t i = 0; i < VRAM_SIZE; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        pattern[i] = (unsigned char)(x >> 24);
    }
    memcpy(regions->vram, pattern, VRAM_SIZE);
    serialize(core, regions);
    size_t found = SIZE_MAX;
    for (size_t at = 0; at + VRAM_SIZE <= regions->blob_size; at++) {
        if (regions->blob[at] == pattern[0] && memcmp(regions->blob + at, pattern, VRAM_SIZE) == 0) {
            if (found != SIZE_MAX) {
                fail("the VRAM pattern occurs twice in the serialized state (at %zu and %zu)", found, at);
            }
            found = at;
        }
    }
    if (found == SIZE_MAX) {
        fail("VRAM is not in the serialized state: this core does not lay it out as bsnes v094 does");
    }
    if (found + CGRAM_AFTER_VRAM + CGRAM_SIZE > regions->blob_size) {
        fail("the serialized state ends before OAM and CGRAM, which follow VRAM in bsnes v094");
    }
    if (write(out, &found, sizeof found) != (ssize_t)sizeof found) {
        fail("reporting the VRAM offset: %s", strerror(errno));
    }
}

static const unsigned char *oam(const struct regions *regions) {
    return regions->blob + regions->vram_in_blob + OAM_AFTER_VRAM;
}

static const unsigned char *cgram(const struct regions *regions) {
    return regions->blob + regions->vram_in_blob + CGRAM_AFTER_VRAM;
}

static void write_dump(const char *path, const struct regions *regions) {
    FILE *file = fopen(path, "wb");
    if (!file) {
        fail("%s: %s", path, strerror(errno));
    }
    bool ok = fwrite(regions->wram, 1, WRAM_SIZE, file) == WRAM_SIZE &&
              fwrite(regions->vram, 1, VRAM_SIZE, file) == VRAM_SIZE &&
              fwrite(cgram(regions), 1, CGRAM_SIZE, file) == CGRAM_SIZE &&
              fwrite(oam(regions), 1, OAM_SIZE, file) == OAM_SIZE;
    if (fclose(file) != 0 || !ok) {
        fail("%s: write error", path);
    }
}

/* WRAM ranges (offsets from $7E:0000, inclusive) reported as zeros in hashes and dumps: where a
 * test program records what bsnes is known to get wrong (the comparison skips exactly those). */
#define MAX_ZEROED 8
static unsigned long zeroed[MAX_ZEROED][2];
static int zeroed_count;

/* Where and after which frame to write a dump; NULL when none is asked for. */
static const char *dump_path;
static unsigned long dump_frame;

/*
 * Prints the hashes of the frame just run and writes its dump if asked, in a child (see
 * in_child). The serialization completes the instruction the CPU was in at the frame boundary,
 * and all four regions are read after it, at one instant.
 */
static void report_frame(const struct core *core, struct regions *regions, int out) {
    (void)out;
    serialize(core, regions);
    if (memcmp(regions->blob + regions->vram_in_blob, regions->vram, VRAM_SIZE) != 0) {
        fail("frame %lu: the serialized VRAM does not match the live one", current_frame);
    }
    /* In the child: zeroing the copy changes nothing the run goes on with. */
    for (int i = 0; i < zeroed_count; i++) {
        memset(regions->wram + zeroed[i][0], 0, zeroed[i][1] - zeroed[i][0] + 1);
    }
    printf("%lu wram:%016llx vram:%016llx cgram:%016llx oam:%016llx\n", current_frame,
           (unsigned long long)fnv1a64(regions->wram, WRAM_SIZE),
           (unsigned long long)fnv1a64(regions->vram, VRAM_SIZE),
           (unsigned long long)fnv1a64(cgram(regions), CGRAM_SIZE),
           (unsigned long long)fnv1a64(oam(regions), OAM_SIZE));
    if (dump_path && current_frame == dump_frame) {
        write_dump(dump_path, regions);
    }
}

/* ---- Main. ---- */

static void usage(void) {
    fputs("usage: bsnes_oracle <core.so> <rom.sfc> <frames> [--input script.txt] "
          "[--dump-frame N --dump-file out.bin] [--zero-wram LO-HI]...\n",
          stderr);
    exit(2);
}

int main(int argc, char **argv) {
    if (argc < 4) {
        usage();
    }
    const char *core_path = argv[1], *rom_path = argv[2];
    unsigned long frames;
    if (!parse_number(argv[3], 10, &frames)) {
        fprintf(stderr, "bsnes_oracle: `%s` is not a frame count\n", argv[3]);
        usage();
    }
    const char *input_path = NULL;
    bool dump_frame_given = false;
    for (int i = 4; i < argc; i++) {
        if (i + 1 >= argc) {
            fprintf(stderr, "bsnes_oracle: %s needs a value\n", argv[i]);
            usage();
        }
        if (strcmp(argv[i], "--input") == 0) {
            input_path = argv[++i];
        } else if (strcmp(argv[i], "--dump-file") == 0) {
            dump_path = argv[++i];
        } else if (strcmp(argv[i], "--dump-frame") == 0) {
            if (!parse_number(argv[++i], 10, &dump_frame)) {
                fprintf(stderr, "bsnes_oracle: `%s` is not a frame number\n", argv[i]);
                usage();
            }
            dump_frame_given = true;
        } else if (strcmp(argv[i], "--zero-wram") == 0) {
            const char *range = argv[++i];
            const char *dash = strchr(range, '-');
            char low[16];
            size_t low_len = dash ? (size_t)(dash - range) : 0;
            unsigned long lo, hi;
            if (!dash || low_len == 0 || low_len >= sizeof low || zeroed_count == MAX_ZEROED) {
                fprintf(stderr, "bsnes_oracle: `%s` is not a WRAM range LO-HI (hex, at most %d)\n", range, MAX_ZEROED);
                usage();
            }
            memcpy(low, range, low_len);
            low[low_len] = 0;
            if (!parse_number(low, 16, &lo) || !parse_number(dash + 1, 16, &hi) || lo > hi || hi >= WRAM_SIZE) {
                fprintf(stderr, "bsnes_oracle: `%s` is not a WRAM range LO-HI (hex offsets below 20000)\n", range);
                usage();
            }
            zeroed[zeroed_count][0] = lo;
            zeroed[zeroed_count][1] = hi;
            zeroed_count++;
        } else {
            fprintf(stderr, "bsnes_oracle: unknown option %s\n", argv[i]);
            usage();
        }
    }
    if (dump_frame_given != (dump_path != NULL)) {
        fputs("bsnes_oracle: --dump-frame and --dump-file go together\n", stderr);
        usage();
    }
    if (dump_path && dump_frame >= frames) {
        fprintf(stderr, "bsnes_oracle: frame %lu is not among the %lu run\n", dump_frame, frames);
        usage();
    }
    if (input_path) {
        read_input_script(input_path);
    }

    struct core core = load_core(core_path);
    core.set_environment(environment);
    core.set_video_refresh(video_refresh);
    core.set_audio_sample(audio_sample);
    core.set_audio_sample_batch(audio_sample_batch);
    core.set_input_poll(input_poll);
    core.set_input_state(input_state);
    core.init();

    size_t rom_size;
    unsigned char *rom = read_file(rom_path, &rom_size);
    if (rom_size == 0) {
        fail("%s: empty file", rom_path);
    }
    struct game_info game = {rom_path, rom, rom_size, NULL};
    if (!core.load_game(&game)) {
        fail("%s: the core rejected the ROM", rom_path);
    }
    struct system_av_info av;
    core.get_system_av_info(&av);
    core.set_controller_port_device(0, DEVICE_JOYPAD);

    struct regions regions = {0};
    regions.wram = core.get_memory_data(MEMORY_SYSTEM_RAM);
    regions.vram = core.get_memory_data(MEMORY_VIDEO_RAM);
    if (!regions.wram || core.get_memory_size(MEMORY_SYSTEM_RAM) != WRAM_SIZE) {
        fail("%s: system RAM is not %u bytes", core_path, WRAM_SIZE);
    }
    if (!regions.vram || core.get_memory_size(MEMORY_VIDEO_RAM) != VRAM_SIZE) {
        fail("%s: video RAM is not %u bytes", core_path, VRAM_SIZE);
    }
    regions.blob_size = core.serialize_size();
    regions.blob = malloc(regions.blob_size);
    if (!regions.blob) {
        fail("out of memory");
    }

    int offset_pipe[2];
    if (pipe(offset_pipe) != 0) {
        fail("pipe: %s", strerror(errno));
    }
    in_child(find_vram_in_blob, &core, &regions, offset_pipe[1]);
    if (read(offset_pipe[0], &regions.vram_in_blob, sizeof regions.vram_in_blob) !=
        (ssize_t)sizeof regions.vram_in_blob) {
        fail("the VRAM offset did not come back from the child");
    }
    close(offset_pipe[0]);
    close(offset_pipe[1]);

    for (current_frame = 0; current_frame < frames; current_frame++) {
        latches_this_run = 0;
        core.run();
        in_child(report_frame, &core, &regions, -1);
    }
    core.unload_game();
    core.deinit();
    return 0;
}
