/* The runtime trace of a sandboxed phase, compiled: what harness/sandbox.py's _TRACER does in
 * Python, at a fraction of the cost per call (issue 21: the trace must cost <= 10 %).
 *
 *   seccomp-trace OUT PYTHON INSTALLER BWRAP-ARGV... -- COMMAND...
 *
 * Starts BWRAP-ARGV with `PYTHON -I -S -c INSTALLER FD` in front of COMMAND inside the sandbox.
 * The installer (sandbox.py's _TRACE_INSTALLER) sets a seccomp filter that reports execve,
 * execveat, connect and exit_group (and opens, ptrace and the calls that make or change a name:
 * write_row) to a listener, hands the listener out through the inherited
 * socket FD and execs COMMAND. This program, the parent of bwrap and outside the sandbox, answers
 * every reported call: it reads the caller's arguments from /proc/PID/mem while the caller waits,
 * lets the call go on (SECCOMP_USER_NOTIF_FLAG_CONTINUE) -- or, for an open a phase's program (or
 * the machine's git) makes to read, answers it with the file its own walk reached (pinning,
 * below: no second walk; a HEAD or pointer file of git's: a sealed copy of the bytes the tracer
 * read and judged, git_seal) -- and
 * appends one JSON row to OUT, read by harness/audit/trace.py's merge_seccomp. Exits with bwrap's
 * status (128 + signal when it was killed).
 *
 * Tamper evidence (issue 29): OUT is opened close-on-exec (no process of the sandbox inherits it),
 * every row carries "seq" (0, 1, 2, ...), and the last row, written when bwrap has exited, is
 * {"kind": "end", "rows": N, "sha256": H}: H is the SHA-256 of every byte written before it. A trace
 * cut, truncated or reordered after the fact no longer matches (harness/audit/trace.py checks it).
 *
 * Written from the kernel's documentation (seccomp_unotify(2)); no third-party code. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__x86_64__)
enum { NR_EXECVE = 59, NR_EXECVEAT = 322, NR_CONNECT = 42, NR_EXIT_GROUP = 231, NR_OPENAT = 257, NR_OPENAT2 = 437,
       NR_OPEN = 2, NR_PTRACE = 101, NR_SYMLINK = 88, NR_SYMLINKAT = 266, NR_LINK = 86, NR_LINKAT = 265, NR_RENAME = 82,
       NR_RENAMEAT = 264, NR_RENAMEAT2 = 316, NR_MKNOD = 133, NR_MKNODAT = 259 };
#elif defined(__aarch64__)
enum { NR_EXECVE = 221, NR_EXECVEAT = 281, NR_CONNECT = 203, NR_EXIT_GROUP = 94, NR_OPENAT = 56, NR_OPENAT2 = 437,
       NR_OPEN = -1, NR_PTRACE = 117, NR_SYMLINK = -2, NR_SYMLINKAT = 36, NR_LINK = -3, NR_LINKAT = 37, NR_RENAME = -4,
       NR_RENAMEAT = 38, NR_RENAMEAT2 = 276, NR_MKNOD = -5, NR_MKNODAT = 33 };
#else
#error "the seccomp tracer knows x86_64 and aarch64 only"
#endif

struct notif { uint64_t id; uint32_t pid; uint32_t flags; int32_t nr; uint32_t arch; uint64_t ip; uint64_t args[6]; };
struct notif_resp { uint64_t id; int64_t val; int32_t error; uint32_t flags; };
#define IOCTL_RECV 0xC0502100UL
#define IOCTL_SEND 0xC0182101UL
#define IOCTL_SET_FLAGS 0x40082104UL
#define FLAG_CONTINUE 1U
#define STRING_LIMIT (1 << 17)
#define ARGV_LIMIT 65536
/* argv bytes read per exec at most (words + their NULs): the kernel never accepts more than 6 MiB
 * of argv + envp, so only a call it will refuse (E2BIG) is cut; the row then says "truncated". */
#define ARGV_TOTAL_LIMIT (8 << 20)

extern char **environ;
static FILE *out;
static volatile int done;

/* A growing byte buffer: a JSON row is built here before it is written. */
struct buf { char *data; size_t len, cap; };

static void put(struct buf *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (b->len + n + 1 > cap) cap *= 2;
        char *grown = realloc(b->data, cap);
        if (!grown) { perror("evotree trace"); _exit(70); }
        b->data = grown;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = 0;
}

static void puts_(struct buf *b, const char *s) { put(b, s, strlen(s)); }

/* Length of the valid UTF-8 sequence at s (0: not one). */
static size_t utf8_len(const unsigned char *s, size_t n) {
    if (s[0] < 0x80) return 1;
    size_t need = (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3 : (s[0] & 0xF8) == 0xF0 ? 4 : 0;
    if (!need || need > n) return 0;
    for (size_t k = 1; k < need; k++)
        if ((s[k] & 0xC0) != 0x80) return 0;
    uint32_t cp = need == 2 ? (s[0] & 0x1Fu) : need == 3 ? (s[0] & 0x0Fu) : (s[0] & 0x07u);
    for (size_t k = 1; k < need; k++) cp = (cp << 6) | (s[k] & 0x3Fu);
    if ((need == 2 && cp < 0x80) || (need == 3 && cp < 0x800) || (need == 4 && cp < 0x10000) || cp > 0x10FFFF
        || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return need;
}

/* A JSON string of raw bytes: valid UTF-8 kept, every other byte "?" (as the Python tracer's
 * surrogateescape-then-replace), control characters escaped. */
static void put_json_string(struct buf *b, const char *raw, size_t n) {
    const unsigned char *s = (const unsigned char *)raw;
    put(b, "\"", 1);
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        if (c == '"' || c == '\\') { char e[2] = {'\\', (char)c}; put(b, e, 2); i++; continue; }
        if (c < 0x20 || c == 0x7F) { char e[8]; snprintf(e, sizeof e, "\\u%04x", c); puts_(b, e); i++; continue; }
        size_t k = utf8_len(s + i, n - i);
        if (!k) { put(b, "?", 1); i++; continue; }
        /* U+0085, U+2028, U+2029: line breaks to some readers (Python's splitlines): escaped */
        if ((k == 2 && c == 0xC2 && s[i + 1] == 0x85) || (k == 3 && c == 0xE2 && s[i + 1] == 0x80
                                                          && (s[i + 2] == 0xA8 || s[i + 2] == 0xA9))) {
            puts_(b, k == 2 ? "\\u0085" : s[i + 2] == 0xA8 ? "\\u2028" : "\\u2029");
            i += k;
            continue;
        }
        put(b, raw + i, k);
        i += k;
    }
    put(b, "\"", 1);
}

/* SHA-256 (FIPS 180-4), of the rows as they are written: the "end" row's running hash. */
struct sha256 { uint32_t h[8]; unsigned char block[64]; size_t fill; uint64_t total; };
static const uint32_t K256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};
#define ROR(x, n) (((x) >> (n)) | ((x) << (32 - (n))))

static void sha256_init(struct sha256 *s) {
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, h0, sizeof h0);
    s->fill = 0;
    s->total = 0;
}

static void sha256_block(struct sha256 *s, const unsigned char *p) {
    uint32_t w[64], a, b, c, d, e, f, g, h;
    for (int i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
        uint32_t s0 = ROR(w[i - 15], 7) ^ ROR(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ROR(w[i - 2], 17) ^ ROR(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    a = s->h[0]; b = s->h[1]; c = s->h[2]; d = s->h[3]; e = s->h[4]; f = s->h[5]; g = s->h[6]; h = s->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 = h + (ROR(e, 6) ^ ROR(e, 11) ^ ROR(e, 25)) + ((e & f) ^ (~e & g)) + K256[i] + w[i];
        uint32_t t2 = (ROR(a, 2) ^ ROR(a, 13) ^ ROR(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g; g = f; f = e; e = d + t1; d = c; c = b; b = a; a = t1 + t2;
    }
    s->h[0] += a; s->h[1] += b; s->h[2] += c; s->h[3] += d; s->h[4] += e; s->h[5] += f; s->h[6] += g; s->h[7] += h;
}

static void sha256_update(struct sha256 *s, const void *data, size_t n) {
    const unsigned char *p = data;
    s->total += n;
    while (n) {
        size_t take = 64 - s->fill < n ? 64 - s->fill : n;
        memcpy(s->block + s->fill, p, take);
        s->fill += take;
        p += take;
        n -= take;
        if (s->fill == 64) { sha256_block(s, s->block); s->fill = 0; }
    }
}

static void sha256_hex(struct sha256 *s, char out[65]) {
    uint64_t bits = s->total * 8;
    unsigned char pad = 0x80, zero = 0, len[8];
    sha256_update(s, &pad, 1);
    while (s->fill != 56) sha256_update(s, &zero, 1);
    for (int i = 0; i < 8; i++) len[i] = (unsigned char)(bits >> (56 - 8 * i));
    sha256_update(s, len, 8);
    for (int i = 0; i < 8; i++) snprintf(out + 8 * i, 9, "%08x", s->h[i]);
}

/* One row out: "seq" put in front (the row starts with "{"), the bytes hashed as written. */
static struct sha256 running;
static uint64_t rows_written;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

static void emit(const struct buf *row) {
    char head[48];
    pthread_mutex_lock(&out_lock);
    int n = snprintf(head, sizeof head, "{\"seq\": %llu, ", (unsigned long long)rows_written);
    fwrite(head, 1, (size_t)n, out);
    sha256_update(&running, head, (size_t)n);
    fwrite(row->data + 1, 1, row->len - 1, out);
    sha256_update(&running, row->data + 1, row->len - 1);
    rows_written++;
    pthread_mutex_unlock(&out_lock);
}

/* openat2(2), tried again while it fails with EAGAIN. A walk scoped by RESOLVE_IN_ROOT or
 * RESOLVE_BENEATH fails so when a rename or a mount anywhere on the machine raced one of its ".."
 * (the kernel cannot tell that the ".." stayed inside): no answer about the path, and the kernel's
 * advice is to try again. Answered as it was, the caller's open failed with EAGAIN on a file that
 * exists: on a loaded machine (sandboxes mounting, git renaming) about 1 in 200 to 1 in 100 such
 * walks, and the dynamic loader's $ORIGIN/../ paths meet it (numpy's libraries did not load: a
 * gym policy's process died before it was ready, and its run came back invalid). Bounded: a phase
 * renaming without pause gets EAGAIN after OPENAT2_TRIES walks, as before. */
#define OPENAT2_TRIES 1000
static int openat2_(int dirfd, const char *path, const void *how, size_t size) {
    for (int tries = 1;; tries++) {
        int fd = (int)syscall(437 /* openat2 */, dirfd, path, how, size);
        if (fd >= 0 || errno != EAGAIN || tries >= OPENAT2_TRIES) return fd;
    }
}

/* What the caller's memory holds at addr (short or empty when the address is not mapped): one
 * process_vm_readv, no descriptor to open per call. */
static ssize_t peek(uint32_t pid, uint64_t addr, void *into, size_t size) {
    if (!addr) return 0;
    struct iovec local = {into, size}, remote = {(void *)(uintptr_t)addr, size};
    ssize_t got = process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);
    return got < 0 ? 0 : got;
}

/* The NUL-terminated string at addr, read page by page (at most limit bytes). */
static size_t cstring(uint32_t pid, uint64_t addr, struct buf *into, size_t limit) {
    char chunk[4096];
    into->len = 0;
    put(into, "", 0);
    while (into->len < limit) {
        uint64_t at = addr + into->len;
        size_t want = 4096 - at % 4096;
        if (want > limit - into->len) want = limit - into->len;
        ssize_t got = peek(pid, at, chunk, want);
        if (got <= 0) break;
        char *end = memchr(chunk, 0, (size_t)got);
        if (end) { put(into, chunk, (size_t)(end - chunk)); break; }
        put(into, chunk, (size_t)got);
    }
    return into->len;
}

static uint32_t tgid_of(uint32_t tid);
static int pending_note(uint32_t tid, uint32_t tgid, uint64_t argv_hash);
static int exec_begins(uint32_t tid, uint32_t tgid);
static void process_ends(uint32_t tgid);
static void exec_settled(uint32_t tid);
static void cache_disable(void);
static void gitread_forget(uint32_t tgid);

static void exec_row(const struct notif *n, struct buf *row) {
    char proc[64];
    /* the process the exec replaces (a thread's exec runs under its process's pid) */
    uint32_t tgid = tgid_of(n->pid);
    if (!exec_begins(n->pid, tgid)) cache_disable();
    gitread_forget(tgid);
    uint64_t path_at = n->nr == NR_EXECVE ? n->args[0] : n->args[1];
    uint64_t argv_at = n->nr == NR_EXECVE ? n->args[1] : n->args[2];
    /* the caller's memory cannot be read (a refused read says EPERM or ESRCH; a bad address says
     * EFAULT and is recorded as an empty path): fail closed, the call is recorded, its arguments
     * are not known */
    struct buf path = {0}, word = {0}, full = {0};
    errno = 0;
    if (!cstring(n->pid, path_at, &path, STRING_LIMIT) && (errno == EPERM || errno == ESRCH)) {
        free(path.data);
        char head[160];
        snprintf(head, sizeof head, "{\"kind\": \"exec\", \"pid\": %u, \"path\": \"\", \"argv\": [], \"cwd\": null, "
                 "\"unreadable\": true}\n", n->pid);
        puts_(row, head);
        return;
    }
    char cwd[4096];
    snprintf(proc, sizeof proc, "/proc/%u/cwd", n->pid);
    ssize_t cwd_len = readlink(proc, cwd, sizeof cwd - 1);
    if (cwd_len >= 0) cwd[cwd_len] = 0;
    /* Every call is recorded: whether it will succeed cannot be known from here (a symlink into the
     * sandbox's /tmp, /proc/self/fd/N, an execveat relative to a directory descriptor, a path a
     * thread rewrites: the check below would miss each). "missing": this check found no
     * executable file (a PATH lookup that fails, most often). */
    char root[64];
    snprintf(root, sizeof root, "/proc/%u/root", n->pid);
    puts_(&full, root);
    if (path.data[0] != '/' && cwd_len >= 0) {
        puts_(&full, cwd);
        puts_(&full, "/");
    }
    puts_(&full, path.data);
    int missing = access(full.data, X_OK) != 0;
    /* the process this exec replaces is checked again at its next reported call (pending_check) */
    char head[96];
    snprintf(head, sizeof head, "{\"kind\": \"exec\", \"pid\": %u, ", n->pid);
    puts_(row, head);
    if (tgid != n->pid) { snprintf(head, sizeof head, "\"tgid\": %u, ", tgid); puts_(row, head); }
    puts_(row, "\"path\": ");
    put_json_string(row, path.data, path.len);
    puts_(row, ", \"argv\": [");
    uint64_t pointers[64], argv_hash = 1469598103934665603ULL;
    size_t words = 0, budget = ARGV_TOTAL_LIMIT;
    int truncated = 0;
    uint64_t at = argv_at;
    int more = argv_at != 0;
    while (more) {
        ssize_t got = peek(n->pid, at, pointers, sizeof pointers - (at % 8));
        size_t count = (size_t)got / 8;
        if (!count) break;
        for (size_t k = 0; k < count; k++) {
            if (!pointers[k]) { more = 0; break; }
            if (words >= ARGV_LIMIT || !budget) { truncated = 1; more = 0; break; }
            cstring(n->pid, pointers[k], &word, budget < STRING_LIMIT ? budget : STRING_LIMIT);
            budget -= word.len + 1 < budget ? word.len + 1 : budget;
            if (words++) puts_(row, ", ");
            put_json_string(row, word.data, word.len);
            for (size_t i = 0; i <= word.len; i++) argv_hash = (argv_hash ^ (unsigned char)word.data[i]) * 1099511628211ULL;
        }
        at += 8 * count;
    }
    puts_(row, "], \"cwd\": ");
    if (cwd_len >= 0) put_json_string(row, cwd, (size_t)cwd_len); else puts_(row, "null");
    if (missing) puts_(row, ", \"missing\": true");
    if (truncated) puts_(row, ", \"truncated\": true");
    /* no room to check it after the exec: failed closed (the audit reads "unreadable") */
    if (!pending_note(n->pid, tgid, argv_hash)) puts_(row, ", \"unreadable\": true, \"unchecked\": true");
    puts_(row, "}\n");
    free(path.data);
    free(word.data);
    free(full.data);
}

/* ptrace (reported): a process of the phase that traces another can read and write its memory
 * and registers -- the machine's git's too, whose opens are exempt from open rows (code put
 * into it; a path rewritten after the tracer read it, where an open of git's goes on). So once any process of the phase asked to trace
 * (PTRACE_TRACEME, PTRACE_ATTACH, PTRACE_SEIZE), the machine's git is exempt only while no thread
 * of it is traced (traced_now, at each of its opens); the request is a "ptrace" row. */
static int ptrace_seen;

static void ptrace_row(const struct notif *n, struct buf *row) {
    uint64_t request = n->args[0];
    if (request != 0 /* TRACEME */ && request != 16 /* ATTACH */ && request != 0x4206 /* SEIZE */) return;
    ptrace_seen = 1;
    char head[160];
    snprintf(head, sizeof head, "{\"kind\": \"ptrace\", \"pid\": %u, \"request\": %llu, \"target\": %lld}\n", n->pid,
             (unsigned long long)request, (long long)(int32_t)n->args[1]);
    puts_(row, head);
}

/* Whether any thread of process TGID is traced now (TracerPid of each task); 1 when not known. */
static int traced_now(uint32_t tgid) {
    char dir[64];
    snprintf(dir, sizeof dir, "/proc/%u/task", tgid);
    int d = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (d < 0) return 1;
    char entries[4096];
    int traced = 0, seen = 0;
    for (;;) {
        long got = syscall(SYS_getdents64, d, entries, sizeof entries);
        if (got <= 0) { if (got < 0) traced = 1; break; }
        for (long at = 0; at < got && !traced;) {
            struct { uint64_t ino; int64_t off; unsigned short reclen; unsigned char type; char name[]; } *e =
                (void *)(entries + at);
            at += e->reclen;
            if (e->name[0] < '0' || e->name[0] > '9') continue;
            char status[96], text[4096];
            snprintf(status, sizeof status, "%s/status", e->name);
            int fd = openat(d, status, O_RDONLY | O_CLOEXEC);
            ssize_t n = fd >= 0 ? read(fd, text, sizeof text - 1) : -1;
            if (fd >= 0) close(fd);
            if (n <= 0) continue;  /* the thread ended */
            text[n] = 0;
            char *t = strstr(text, "\nTracerPid:");
            traced = !t || strtoul(t + 11, NULL, 10) != 0;
            seen++;
        }
        if (traced) break;
    }
    close(d);
    return traced || !seen;
}

static void connect_row(const struct notif *n, struct buf *row) {
    char head[256], text[INET6_ADDRSTRLEN];
    unsigned char sa[128];
    size_t want = n->args[2] < sizeof sa ? (size_t)n->args[2] : sizeof sa;
    struct iovec local = {sa, want}, remote = {(void *)(uintptr_t)n->args[1], want};
    ssize_t got = n->args[1] ? process_vm_readv((pid_t)n->pid, &local, 1, &remote, 1, 0) : 0;
    if (got < 0 && (errno == EPERM || errno == ESRCH)) {
        snprintf(head, sizeof head, "{\"kind\": \"connect\", \"pid\": %u, \"family\": \"unknown\", \"port\": null, "
                 "\"address\": null, \"unreadable\": true}\n", n->pid);
        puts_(row, head);
        return;
    }
    if (got < 0) got = 0;
    uint16_t family = got >= 2 ? (uint16_t)(sa[0] | sa[1] << 8) : 0;
    unsigned port = got >= 4 ? (unsigned)(sa[2] << 8 | sa[3]) : 0;
    if (family == AF_INET && got >= 8 && inet_ntop(AF_INET, sa + 4, text, sizeof text)) {
        snprintf(head, sizeof head, "{\"kind\": \"connect\", \"pid\": %u, \"family\": \"AF_INET\", \"port\": %u, "
                 "\"address\": \"%s\"}\n", n->pid, port, text);
        puts_(row, head);
    } else if (family == AF_INET6 && got >= 24 && inet_ntop(AF_INET6, sa + 8, text, sizeof text)) {
        snprintf(head, sizeof head, "{\"kind\": \"connect\", \"pid\": %u, \"family\": \"AF_INET6\", \"port\": %u, "
                 "\"address\": \"%s\"}\n", n->pid, port, text);
        puts_(row, head);
    }
}

/* What the kernel really runs in the caller (issue 29: git is recognised by what runs, not by its
 * name): the program of /proc/PID/exe (resolved by the kernel at exec: a thread rewriting the path,
 * exec -a, a renamed copy or a memfd change nothing) with its device, inode and the SHA-256 of its
 * content (once per device, inode, size and mtime), and every file mapped executable (the program
 * a loader such as ld.so started is one of them). Read while the caller waits in exit_group. */
#define EXE_CACHE 512
#define MAPS_LIMIT 32
#define HASH_LIMIT ((off_t)1 << 30)
struct exe_seen { dev_t dev; ino_t ino; off_t size; struct timespec mtime, ctime; char hex[65]; };
static struct exe_seen exe_cache[EXE_CACHE];
static size_t exe_cached;

static const char *exe_cached_hash(const struct stat *st) {
    for (size_t k = 0; k < exe_cached; k++) {
        struct exe_seen *e = &exe_cache[k];
        if (e->dev == st->st_dev && e->ino == st->st_ino && e->size == st->st_size
            && e->mtime.tv_sec == st->st_mtim.tv_sec && e->mtime.tv_nsec == st->st_mtim.tv_nsec
            && e->ctime.tv_sec == st->st_ctim.tv_sec && e->ctime.tv_nsec == st->st_ctim.tv_nsec)
            return e->hex;
    }
    return NULL;
}

/* The sizes of this machine's git programs (note_system_gits): a file of another size cannot have
 * a git's content, so its hash -- which would decide nothing -- is not computed (a Python phase
 * maps ~30 MB of libraries: ~0.2 s of hashing per phase otherwise). */
static off_t git_sizes[16];
static size_t git_size_count;

static int git_sized(off_t size) {
    for (size_t k = 0; k < git_size_count; k++)
        if (git_sizes[k] == size) return 1;
    return 0;
}

static const char *exe_hash(int fd, const struct stat *st) {
    const char *known = exe_cached_hash(st);
    if (known) return known;
    if (st->st_size > HASH_LIMIT || !git_sized(st->st_size)) return NULL;
    struct sha256 h;
    sha256_init(&h);
    char chunk[1 << 16];
    off_t at = 0;
    for (;;) {
        ssize_t got = pread(fd, chunk, sizeof chunk, at);
        if (got < 0) return NULL;
        if (got == 0) break;
        sha256_update(&h, chunk, (size_t)got);
        at += got;
    }
    struct exe_seen *slot = &exe_cache[exe_cached < EXE_CACHE ? exe_cached++ : (size_t)(st->st_ino % EXE_CACHE)];
    slot->dev = st->st_dev;
    slot->ino = st->st_ino;
    slot->size = st->st_size;
    slot->mtime = st->st_mtim;
    slot->ctime = st->st_ctim; /* utimensat can restore mtime after an in-place rewrite, not ctime */
    sha256_hex(&h, slot->hex);
    return slot->hex;
}

/* The program the kernel runs in PID: its path, device, inode, links and content hash. */
static int is_system_git(const struct stat *st);

/* Returns whether the program is the machine's own git; known: a stat of /proc/PID/exe made
 * already (NULL: made here). */
static int exe_identity(uint32_t pid, struct buf *row, const struct stat *known) {
    char proc[64], link[4096], head[160];
    snprintf(proc, sizeof proc, "/proc/%u/exe", pid);
    ssize_t n = readlink(proc, link, sizeof link - 1);
    puts_(row, ", \"exe\": ");
    if (n >= 0) put_json_string(row, link, (size_t)n); else puts_(row, "null");
    struct stat st;
    if (known) st = *known;
    else if (stat(proc, &st) != 0) return 0;
    const char *hex = exe_cached_hash(&st);
    if (!hex && git_sized(st.st_size)) {
        int fd = open(proc, O_RDONLY | O_CLOEXEC);
        struct stat again;
        if (fd >= 0 && fstat(fd, &again) == 0 && again.st_dev == st.st_dev && again.st_ino == st.st_ino)
            hex = exe_hash(fd, &again);
        if (fd >= 0) close(fd);
    }
    snprintf(head, sizeof head, ", \"exe_dev\": %llu, \"exe_ino\": %llu, \"exe_links\": %llu, \"exe_size\": %lld, "
             "\"exe_sha256\": ", (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
             (unsigned long long)st.st_nlink, (long long)st.st_size);
    puts_(row, head);
    if (hex) { puts_(row, "\""); puts_(row, hex); puts_(row, "\""); } else puts_(row, "null");
    return is_system_git(&st);
}

static void exe_fields(uint32_t pid, struct buf *row) {
    char proc[64];
    struct stat st;
    /* The machine's own git: its mapped files are not read (the costliest part of a row: ~0.2 ms
     * of /proc/PID/maps; what they would show -- a library put into git by LD_PRELOAD -- is not
     * judged, docs/threat-model.md) */
    if (exe_identity(pid, row, NULL)) return;
    /* the files mapped executable, in order, each once */
    snprintf(proc, sizeof proc, "/proc/%u/maps", pid);
    FILE *maps = fopen(proc, "re");
    puts_(row, ", \"mapped\": [");
    struct buf hashes = {0};
    put(&hashes, "", 0);
    if (maps) {
        char line[4352];
        char seen[MAPS_LIMIT][256];
        size_t count = 0;
        while (count < MAPS_LIMIT && fgets(line, sizeof line, maps)) {
            char perms[8] = {0}, range[64] = {0};
            int path_at = 0;
            if (sscanf(line, "%63s %7s %*s %*s %*s %n", range, perms, &path_at) < 2 || perms[2] != 'x' || !path_at)
                continue;
            char *path = line + path_at;
            size_t len = strcspn(path, "\n");
            if (!len || path[0] == '[') continue;
            int dup = 0;
            for (size_t k = 0; k < count && !dup; k++) dup = !strncmp(seen[k], path, sizeof seen[k] - 1);
            if (dup) continue;
            snprintf(seen[count], sizeof seen[count], "%.*s", (int)len, path);
            if (count++) { puts_(row, ", "); puts_(&hashes, ", "); }
            put_json_string(row, path, len);
            /* the mapping's own file (map_files: the very file mapped; needs privileges), else the path
             * inside the sandbox's root; stat first: a file hashed already is not opened again */
            char mapped[4352 + 64];
            snprintf(mapped, sizeof mapped, "/proc/%u/map_files/%s", pid, range);
            int via_map = stat(mapped, &st) == 0;
            if (!via_map && path[0] == '/') snprintf(mapped, sizeof mapped, "/proc/%u/root%.*s", pid, (int)len, path);
            const char *hex = via_map && S_ISREG(st.st_mode) ? exe_cached_hash(&st) : NULL;
            if (!hex && (!via_map || git_sized(st.st_size)) && (via_map || path[0] == '/')) {
                int mfd = open(mapped, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
                if (mfd >= 0 && fstat(mfd, &st) == 0 && S_ISREG(st.st_mode)) hex = exe_hash(mfd, &st);
                if (mfd >= 0) close(mfd);
            }
            if (hex) { puts_(&hashes, "\""); puts_(&hashes, hex); puts_(&hashes, "\""); } else puts_(&hashes, "null");
        }
        fclose(maps);
    }
    puts_(row, "], \"mapped_sha256\": [");
    puts_(row, hashes.data);
    puts_(row, "]");
    free(hashes.data);
}

/* /proc/PID/cmdline into cmd (at most 1 MiB); -1 when it cannot be read. */
static int read_cmdline(uint32_t pid, struct buf *cmd) {
    char proc[64], chunk[4096];
    snprintf(proc, sizeof proc, "/proc/%u/cmdline", pid);
    cmd->len = 0;
    put(cmd, "", 0);
    int fd = open(proc, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t got = 0;
    while (cmd->len < (size_t)ARGV_LIMIT * 16 && (got = read(fd, chunk, sizeof chunk)) > 0) put(cmd, chunk, (size_t)got);
    close(fd);
    return got < 0 ? -1 : 0;
}

static void put_cmdline(struct buf *row, const struct buf *cmd, int ok) {
    if (!ok) { puts_(row, "null"); return; }
    puts_(row, "[");
    size_t start = 0, words = 0;
    for (size_t i = 0; i < cmd->len; i++) {
        if (cmd->data[i]) continue;
        if (words++) puts_(row, ", ");
        put_json_string(row, cmd->data + start, i - start);
        start = i + 1;
    }
    puts_(row, "]");
}

/* The thread group (process) of thread TID: after an exec by any of its threads the program runs
 * under this pid. TID itself when it cannot be read. */
static uint32_t tgid_of(uint32_t tid) {
    /* a thread-group leader (nearly every caller) is told by pidfd_open, which refuses any other
     * thread (EINVAL; a kernel with PIDFD_THREAD still refuses without the flag) */
    int leader = (int)syscall(434 /* pidfd_open */, (pid_t)tid, 0);
    if (leader >= 0) { close(leader); return tid; }
    char proc[64], text[1024];
    snprintf(proc, sizeof proc, "/proc/%u/status", tid);
    int fd = open(proc, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return tid;
    ssize_t got = read(fd, text, sizeof text - 1);
    close(fd);
    if (got <= 0) return tid;
    text[got] = 0;
    char *at = strstr(text, "\nTgid:");
    unsigned long tgid = at ? strtoul(at + 6, NULL, 10) : 0;
    return tgid ? (uint32_t)tgid : tid;
}

/* When PID started (field 22 of /proc/PID/stat; an exec keeps it): tells a reused pid apart. */
static unsigned long long start_of(uint32_t pid) {
    char proc[64], text[1024];
    snprintf(proc, sizeof proc, "/proc/%u/stat", pid);
    int fd = open(proc, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    ssize_t got = read(fd, text, sizeof text - 1);
    close(fd);
    if (got <= 0) return 0;
    text[got] = 0;
    char *p = strrchr(text, ')');
    if (!p) return 0;
    p++;
    for (int field = 3; field < 22 && p; field++) p = strchr(p + 1, ' ');
    return p ? strtoull(p + 1, NULL, 10) : 0;
}

static uint64_t fnv(const char *data, size_t n) {
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)data[i]) * 1099511628211ULL;
    return h;
}

/* The check after an exec (the argv the kernel really copied): an exec row's argv is read from the
 * caller's memory before the kernel copies it, and a thread of the caller can rewrite it in
 * between (seccomp_unotify(2): CONTINUE is no security decision). So each exec is remembered here
 * by its process (pid, start time, and the program and command line it had before), and at the
 * process's next reported call -- a dynamic program's first open, before any of its own code ran --
 * its command line and program are read back from /proc: an "execed" row when the exec took place
 * (the program or the command line changed). A killed program has made that call already. */
#define PENDING 65536
#define PENDING_PROBE 64
struct pending_exec { uint32_t tgid, tid; unsigned long long start; dev_t dev; ino_t ino; uint64_t argv_hash; };
static struct pending_exec pending[PENDING];
static size_t pending_count;

static struct pending_exec *pending_find(uint32_t tgid, int insert) {
    for (size_t k = 0; k < PENDING_PROBE; k++) {
        struct pending_exec *e = &pending[(tgid + k) % PENDING];
        if (e->tgid == tgid) return e;
        if (!e->tgid) return insert ? e : NULL;
    }
    return NULL;
}

static void pending_drop(struct pending_exec *e) {
    /* backward-shift deletion keeps every probe sequence whole */
    size_t hole = (size_t)(e - pending);
    e->tgid = 0;
    pending_count--;
    for (size_t k = 1; k < PENDING_PROBE; k++) {
        size_t at = (hole + k) % PENDING;
        if (!pending[at].tgid) break;
        size_t home = pending[at].tgid % PENDING;
        size_t dist_hole = (hole - home + PENDING) % PENDING, dist_at = (at - home + PENDING) % PENDING;
        if (dist_hole < dist_at) { pending[hole] = pending[at]; pending[at].tgid = 0; hole = at; }
    }
}

/* At an exec call (the caller waits): remember its process; 0 when there is no room (the exec row
 * then says "unreadable": the audit fails it closed). */
static int pending_note(uint32_t tid, uint32_t tgid, uint64_t argv_hash) {
    struct pending_exec *e = pending_find(tgid, 1);
    if (!e) return 0;
    if (!e->tgid) pending_count++;
    e->tgid = tgid;
    e->start = start_of(tgid);
    char proc[64];
    struct stat st;
    snprintf(proc, sizeof proc, "/proc/%u/exe", tid);
    if (stat(proc, &st) == 0) { e->dev = st.st_dev; e->ino = st.st_ino; } else { e->dev = 0; e->ino = 0; }
    e->argv_hash = argv_hash;
    e->tid = tid;
    return 1;
}

/* At any reported call of PID: when an exec of its process waits for its check, the check. */
/* The machine's git started with a variable that loads code into it (LD_PRELOAD, LD_AUDIT,
 * GCONV_PATH, an LD_LIBRARY_PATH other than the tracer's own: read from /proc/PID/environ at the check after its exec, before any of that code
 * ran): its opens are not exempt (they are open rows), and its execed row names the variables.
 * Kept by process until its exit or its next exec; a set that is full taints nothing more (the
 * row still names the variables). */
#define TAINTED 1024
static uint32_t tainted[TAINTED];
static size_t tainted_count;

static int is_tainted(uint32_t tgid) {
    for (size_t k = 0; k < tainted_count; k++)
        if (tainted[k] == tgid) return 1;
    return 0;
}

static void untaint(uint32_t tgid) {
    for (size_t k = 0; k < tainted_count; k++)
        if (tainted[k] == tgid) { tainted[k] = tainted[--tainted_count]; return; }
}

static const char *LOADER_VARS[] = {"LD_PRELOAD=", "LD_AUDIT=", "GCONV_PATH="};
/* Variables that make the machine's git show a history other than its references': a graft file
 * (a commit given other parents) and another base for replacement references; a common dir and
 * an index of another folder (judged by the repository whose objects git read: trace_beside). */
static const char *HISTORY_VARS[] = {"GIT_GRAFT_FILE=", "GIT_REPLACE_REF_BASE=", "GIT_COMMON_DIR=", "GIT_INDEX_FILE="};

/* The loader variables (with a value) of PID's environment as the kernel copied it, as a JSON
 * list into row (nothing when there are none); whether there were any. The history variables
 * (HISTORY_VARS) go into row too, as "git_env" (they taint nothing: the audit judges them). */
static int loader_env(uint32_t pid, struct buf *row) {
    char proc[64], chunk[4096];
    snprintf(proc, sizeof proc, "/proc/%u/environ", pid);
    int fd = open(proc, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    struct buf env = {0};
    put(&env, "", 0);
    ssize_t got;
    while (env.len < (8u << 20) && (got = read(fd, chunk, sizeof chunk)) > 0) put(&env, chunk, (size_t)got);
    close(fd);
    int found = 0, history = 0;
    struct buf git_env = {0};
    put(&git_env, "", 0);
    for (size_t at = 0; at < env.len;) {
        const char *entry = env.data + at;
        size_t len = strnlen(entry, env.len - at);
        for (size_t k = 0; k < sizeof LOADER_VARS / sizeof *LOADER_VARS; k++) {
            size_t name = strlen(LOADER_VARS[k]);
            if (len > name && !strncmp(entry, LOADER_VARS[k], name)) {
                puts_(row, found++ ? ", " : ", \"loader_env\": [");
                put_json_string(row, entry, len);
            }
        }
        /* a library folder the phase chose (not the one it started with): a library of its own
         * (libpcre2, libz...) would run inside git */
        if (len > 16 && !strncmp(entry, "LD_LIBRARY_PATH=", 16)) {
            const char *start = getenv("LD_LIBRARY_PATH");
            if (!start || strlen(start) != len - 16 || strncmp(start, entry + 16, len - 16)) {
                puts_(row, found++ ? ", " : ", \"loader_env\": [");
                put_json_string(row, entry, len);
            }
        }
        for (size_t k = 0; k < sizeof HISTORY_VARS / sizeof *HISTORY_VARS; k++) {
            size_t name = strlen(HISTORY_VARS[k]);
            if (len >= name && !strncmp(entry, HISTORY_VARS[k], name)) {
                puts_(&git_env, history++ ? ", " : ", \"git_env\": [");
                put_json_string(&git_env, entry, len);
            }
        }
        at += len + 1;
    }
    if (found) puts_(row, "]");
    if (history) { puts_(row, git_env.data); puts_(row, "]"); }
    free(git_env.data);
    free(env.data);
    return found;
}

/* Put the check WAS of process PID back, for a later call (when there is room). */
static void pending_keep(uint32_t pid, const struct pending_exec *was) {
    struct pending_exec *again = pending_find(pid, 1);
    if (!again) return;
    if (!again->tgid) pending_count++;
    *again = *was;
}

static void pending_check(uint32_t pid, int nr, struct buf *row) {
    if (!pending_count) return;
    struct pending_exec *e = pending_find(pid, 0);
    if (!e) return;
    struct pending_exec was = *e;
    pending_drop(e);
    /* An exec by a thread other than the leader: after it, the thread runs under the process's
     * pid -- but so does the old leader until the exec has killed it, and its call may come
     * first: a call the tracer received before the kill and answers while the leader exits
     * (its program and command line can no longer be read, its /proc entry may be gone) or
     * while the exec'ing thread takes over its pid (the old program still mapped). Until the new
     * program can be read, the check waits for a later call (a failed exec of such a thread is
     * left to the exit row), so the new program is still checked. */
    int thread_exec = was.tid && was.tid != pid;
    unsigned long long start = start_of(pid);
    if (start != was.start) { /* another process under a reused pid, or none readable now */
        if (thread_exec && !start) pending_keep(pid, &was);
        return;
    }
    char proc[64];
    struct stat st;
    snprintf(proc, sizeof proc, "/proc/%u/exe", pid);
    int have_exe = stat(proc, &st) == 0;
    int same_exe = have_exe && st.st_dev == was.dev && st.st_ino == was.ino;
    if (thread_exec && (same_exe || !have_exe)) {
        pending_keep(pid, &was);
        return;
    }
    struct buf cmd = {0};
    int ok = read_cmdline(pid, &cmd) == 0;
    if (thread_exec && !ok) {
        pending_keep(pid, &was);
        free(cmd.data);
        return;
    }
    int same_argv = ok && fnv(cmd.data, cmd.len) == was.argv_hash;
    untaint(pid);
    struct buf loaders = {0};
    put(&loaders, "", 0);
    if (have_exe && is_system_git(&st) && loader_env(pid, &loaders) && tainted_count < TAINTED)
        tainted[tainted_count++] = pid;
    /* nothing to add; or an exec again from the same program: the one before failed (a PATH search) */
    if (loaders.len == 0 && ((same_exe && same_argv) || (same_exe && (nr == NR_EXECVE || nr == NR_EXECVEAT)))) {
        free(cmd.data);
        free(loaders.data);
        return;
    }
    char head[128];
    /* "same_exe": the program did not change -- the exec failed (the command line is the old
     * program's) or ran the same program again; the command line is then kept beside the argv */
    snprintf(head, sizeof head, "{\"kind\": \"execed\", \"pid\": %u, %s\"cmdline\": ", pid,
             same_exe ? "\"same_exe\": true, " : "");
    puts_(row, head);
    put_cmdline(row, &cmd, ok);
    exe_identity(pid, row, have_exe ? &st : NULL);
    puts_(row, loaders.data);
    puts_(row, "}\n");
    free(cmd.data);
    free(loaders.data);
}

static void exit_row(const struct notif *n, struct buf *row) {
    char head[128];
    struct buf cmd = {0};
    int ok = read_cmdline(n->pid, &cmd) == 0;
    uint32_t tgid = tgid_of(n->pid);
    struct pending_exec *e = pending_count ? pending_find(tgid, 0) : NULL;
    if (e) pending_drop(e);
    process_ends(tgid);
    if (tainted_count) untaint(tgid);
    snprintf(head, sizeof head, "{\"kind\": \"exit\", \"pid\": %u, ", n->pid);
    puts_(row, head);
    if (tgid != n->pid) { snprintf(head, sizeof head, "\"tgid\": %u, ", tgid); puts_(row, head); }
    snprintf(head, sizeof head, "\"status\": %u, \"cmdline\": ", (unsigned)(n->args[0] & 0xFF));
    puts_(row, head);
    put_cmdline(row, &cmd, ok);
    exe_fields(n->pid, row);
    puts_(row, "}\n");
    free(cmd.data);
}

/* Opens of git storage (issue 29: git used as a library, or its objects read with zlib, starts no
 * program): every open/openat/openat2 is reported; its path is read from the caller's memory
 * (process_vm_readv: no descriptor per call), made absolute against the caller's cwd or directory
 * descriptor, and recorded only when it lies in a git object store, pack, ref or reflog and the
 * caller is not the machine's own git (whose every command is an exec row already). */
#define OPEN_ROWS_LIMIT 20000
static struct { dev_t dev; ino_t ino; } system_gits[8];
static size_t system_git_count;
static unsigned long open_rows;

/* The machine's git programs (the paths harness/audit/trace.py's git_identities reads, and git on
 * PATH): their sizes (git_sized); the identity of those at the system's paths only is exempt from
 * open rows (a folder on PATH may be one a phase can write to). */
static void note_git(const char *path, int exempt) {
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return;
    if (exempt && system_git_count < 8) {
        system_gits[system_git_count].dev = st.st_dev;
        system_gits[system_git_count].ino = st.st_ino;
        system_git_count++;
    }
    if (!git_sized(st.st_size) && git_size_count < sizeof git_sizes / sizeof *git_sizes)
        git_sizes[git_size_count++] = st.st_size;
}

static void note_system_gits(void) {
    const char *paths[] = {"/usr/bin/git", "/bin/git", "/usr/local/bin/git", "/usr/lib/git-core/git",
                           "/usr/libexec/git-core/git"};
    for (size_t k = 0; k < sizeof paths / sizeof *paths; k++) note_git(paths[k], 1);
    const char *path = getenv("PATH");
    char dir[4096 + 8];
    while (path && *path) {
        size_t len = strcspn(path, ":");
        if (len && len < 4096 && path[0] == '/') {
            snprintf(dir, sizeof dir, "%.*s/git", (int)len, path);
            note_git(dir, 0);
        }
        path += len + (path[len] == ':');
    }
}

/* The NUL-terminated string at ADDR in PID's memory, at most CAP - 1 bytes; *CUT (may be NULL):
 * set when a read failed before its end (memory the tracer cannot read, memfd_secret's, or none:
 * what the kernel will read there is not known). */
static size_t remote_string_cut(uint32_t pid, uint64_t addr, char *into, size_t cap, int *cut) {
    size_t got = 0;
    if (cut) *cut = !addr;
    while (addr && got + 1 < cap) {
        size_t want = 4096 - (size_t)((addr + got) % 4096);
        if (!got && want > 256) want = 256; /* most paths: one short copy, not the rest of a page */
        if (want > cap - 1 - got) want = cap - 1 - got;
        struct iovec local = {into + got, want}, remote = {(void *)(uintptr_t)(addr + got), want};
        ssize_t n = process_vm_readv((pid_t)pid, &local, 1, &remote, 1, 0);
        if (n <= 0) { if (cut) *cut = 1; break; }
        char *end = memchr(into + got, 0, (size_t)n);
        if (end) { got = (size_t)(end - into); into[got] = 0; return got; }
        got += (size_t)n;
    }
    into[got] = 0;
    return got;
}

static size_t remote_string(uint32_t pid, uint64_t addr, char *into, size_t cap) {
    return remote_string_cut(pid, addr, into, cap, NULL);
}

static int git_storage(const char *p) {
    static const char *marks[] = {"/.git/objects", "/.git/refs", "/.git/packed-refs", "/.git/logs", "/.git/modules",
                                  "/objects/pack/", "/objects/info/", "/refs/heads", "/refs/tags", "/refs/remotes",
                                  "/packed-refs", "/logs/HEAD", "/logs/refs", "/.git/ORIG_HEAD", "/.git/FETCH_HEAD"};
    for (size_t k = 0; k < sizeof marks / sizeof *marks; k++)
        if (strstr(p, marks[k])) return 1;
    size_t n = strlen(p);
    if ((n > 5 && !strcmp(p + n - 5, ".pack")) || (n > 4 && !strcmp(p + n - 4, ".idx"))) return 1;
    /* a loose object of any repository, bare ones included: .../objects/xx/<38 hex> */
    const char *o = strstr(p, "/objects/");
    while (o) {
        const char *h = o + 9;
        int hex = 1;
        for (int i = 0; i < 2 && hex; i++) hex = (h[i] >= '0' && h[i] <= '9') || (h[i] >= 'a' && h[i] <= 'f');
        if (hex && h[2] == '/' && strlen(h + 3) >= 38) return 1;
        o = strstr(o + 1, "/objects/");
    }
    return 0;
}

/* Whether PID runs the machine's own git (its every command is an exec row already). */
static int is_system_git(const struct stat *st) {
    for (size_t k = 0; k < system_git_count; k++)
        if (system_gits[k].dev == st->st_dev && system_gits[k].ino == st->st_ino) return 1;
    return 0;
}

/* Which program a thread runs, remembered between its opens: a stat of /proc/PID/exe costs ~5 us
 * on a VM (a path walk through /proc), most of the tracer's work per open of the machine's git,
 * while a poll of a pidfd costs ~1 us. An entry holds a pidfd of the thread, opened before its
 * program was read: a pidfd of a task that has ended polls readable, so a tid that was reused by
 * another task is never taken for the one remembered. A task changes its program only by an
 * exec, and every exec is reported: at its notification every entry of the process is dropped,
 * and the process is "in flight" -- none of its threads is remembered -- until its exec is over:
 * a call of the exec'ing thread after it (the exec failed or the new program runs: either way the
 * program read then is the one that runs), or its exit. An exec by a thread other than the leader
 * keeps its process in flight to its exit (after the exec the thread has the leader's pid, and a
 * call under that pid could still be the old leader's). Where anything cannot be told (no pidfd
 * of a thread before Linux 6.9, the in-flight table full), nothing is remembered: a stat per open,
 * as without the cache. */
#define VERDICTS 256
#define IN_FLIGHT 1024
#define PIDFD_THREAD_FLAG 0x80 /* O_EXCL: PIDFD_THREAD (Linux 6.9+) */
struct verdict { uint32_t tid, tgid; int pidfd, git; };
static struct verdict verdicts[VERDICTS];
struct flight { uint32_t tgid, tid; };
static struct flight in_flight[IN_FLIGHT];
static size_t in_flight_count;

static void verdict_drop(struct verdict *v) {
    if (v->tid) close(v->pidfd);
    v->tid = 0;
}

/* Drop every remembered thread of process TGID. */
static void forget_process(uint32_t tgid) {
    for (size_t k = 0; k < VERDICTS; k++)
        if (verdicts[k].tid && verdicts[k].tgid == tgid) verdict_drop(&verdicts[k]);
}

static struct flight *flight_of(uint32_t tgid) {
    for (size_t k = 0; k < in_flight_count; k++)
        if (in_flight[k].tgid == tgid) return &in_flight[k];
    return NULL;
}

static void flight_end(struct flight *f) { *f = in_flight[--in_flight_count]; }

/* set once the cache cannot be kept right (the in-flight table full): a stat per open from then on */
static int cache_off;

static void cache_disable(void) {
    cache_off = 1;
    for (size_t k = 0; k < VERDICTS; k++) verdict_drop(&verdicts[k]);
}

/* An exec of thread TID of process TGID is reported (the caller waits; whether it will succeed
 * is not known). Returns 0 when the process cannot be kept in flight (the cache is then off). */
static int exec_begins(uint32_t tid, uint32_t tgid) {
    if (cache_off) return 1;
    forget_process(tgid);
    struct flight *f = flight_of(tgid);
    if (f) {
        if (f->tid != tid) f->tid = 0; /* two threads exec'ing: in flight to the process's end */
        return 1;
    }
    if (in_flight_count == IN_FLIGHT) { /* processes killed while in flight: their entries go */
        for (size_t k = 0; k < in_flight_count;) {
            int alive = (int)syscall(434 /* pidfd_open */, (pid_t)in_flight[k].tgid, 0);
            if (alive >= 0) { close(alive); k++; }
            else if (errno == ESRCH) flight_end(&in_flight[k]);
            else k++;
        }
        if (in_flight_count == IN_FLIGHT) return 0;
    }
    in_flight[in_flight_count++] = (struct flight){tgid, tid};
    return 1;
}

/* Any reported call of TID: when it is the leader whose own exec was in flight, that exec is over. */
static void exec_settled(uint32_t tid) {
    struct flight *f = in_flight_count ? flight_of(tid) : NULL;
    if (f && f->tid == tid) flight_end(f);
}

/* Process TGID is ending (exit_group reported): its threads are forgotten, its pidfds closed. */
static void process_ends(uint32_t tgid) {
    forget_process(tgid);
    struct flight *f = in_flight_count ? flight_of(tgid) : NULL;
    if (f) flight_end(f);
}

/* Whether TID runs the machine's own git; *tgid: its process (0: not read). */
static int runs_system_git(uint32_t tid, uint32_t *tgid) {
    *tgid = 0;
    struct verdict *v = &verdicts[tid % VERDICTS];
    if (tid && v->tid == tid) { /* (0: a caller of no pid here; an empty entry is never read) */
        struct pollfd p = {.fd = v->pidfd, .events = POLLIN};
        if (poll(&p, 1, 0) == 0) { *tgid = v->tgid; return v->git; }
        verdict_drop(v); /* the task remembered has ended: the tid is another's */
    }
    int pidfd = cache_off ? -1 : (int)syscall(434 /* pidfd_open */, (pid_t)tid, 0);
    if (pidfd >= 0) *tgid = tid; /* pidfd_open refuses any thread but a process's leader */
    else if (!cache_off && (errno == EINVAL || errno == ENOENT)) { /* a thread (6.18 says ENOENT) */
        pidfd = (int)syscall(434, (pid_t)tid, PIDFD_THREAD_FLAG);
        if (pidfd >= 0) *tgid = tgid_of(tid);
    }
    if (pidfd >= 0 && (*tgid == 0 || (in_flight_count && flight_of(*tgid)))) { close(pidfd); pidfd = -1; }
    if (pidfd >= 0) fcntl(pidfd, F_SETFD, FD_CLOEXEC);
    char proc[64];
    struct stat st;
    snprintf(proc, sizeof proc, "/proc/%u/exe", tid);
    if (stat(proc, &st) != 0) { if (pidfd >= 0) close(pidfd); return 0; }
    int git = is_system_git(&st);
    if (pidfd >= 0) {
        verdict_drop(v);
        *v = (struct verdict){tid, *tgid, pidfd, git};
    }
    return git;
}

/* The file a path names for PID, as the kernel would walk it (symlinks, "..", a descriptor's
 * /proc/self/fd/N or /dev/fd/N): walked from outside, in PID's root (openat2 RESOLVE_IN_ROOT,
 * O_PATH: nothing is opened for reading, a FIFO does not block), and read back as a path. Returns
 * its length (0: it could not be walked; *magic set when the path goes through a descriptor link
 * of /proc that could not be followed). */
/* PATH with its empty and "." components dropped ("//proc/./self" is "/proc/self"), for the
 * checks of a descriptor link's spellings below (the walk itself takes the path as written). */
static void squeeze(const char *path, char *into, size_t cap) {
    size_t o = 0;
    const char *p = path;
    while (*p && o + 2 < cap) {
        while (*p == '/') p++;
        size_t len = strcspn(p, "/");
        if (!len) break;
        if (!(len == 1 && p[0] == '.')) {
            if (o + 1 + len >= cap) break;
            into[o++] = '/';
            memcpy(into + o, p, len);
            o += len;
        }
        p += len;
    }
    if (!o) into[o++] = '/';
    into[o] = 0;
}

/* A squeezed PATH with its ".." folded by name (at "/", ".." stays "/"). Where a walk following
 * no link reached a missing name, every folder before it was a folder, not a link, so this is
 * where that walk went: "/work/../proc/PID/fd/N/x" went into /proc, which a check of the path
 * as written ("/work/...") does not see. */
static void fold_dots(const char *path, char *into, size_t cap) {
    size_t o = 0;
    const char *p = path;
    while (*p) {
        while (*p == '/') p++;
        size_t len = strcspn(p, "/");
        if (!len) break;
        if (len == 2 && p[0] == '.' && p[1] == '.') {
            while (o && into[o - 1] != '/') o--;
            if (o) o--;
        } else if (!(len == 1 && p[0] == '.') && o + 1 + len < cap) {
            into[o++] = '/';
            memcpy(into + o, p, len);
            o += len;
        }
        p += len;
    }
    if (!o) into[o++] = '/';
    into[o] = 0;
}

/* Whether a squeezed path goes through a /proc link the tracer cannot follow for the caller:
 * an entry of /proc/X/fd or /proc/X/task/Y/fd, their cwd, root and an entry of map_files (X:
 * self, thread-self or a pid; not exe, a program, which many programs open as /proc/self/exe;
 * the caller's own self and thread-self cwd and root are followed before, in resolve_in),
 * or an entry of /dev/fd and /dev/std{in,out,err}. The folders fd and map_files themselves are
 * listings of the caller's own descriptors (Python's subprocess opens /proc/self/fd to close
 * them before every exec): no link is followed. */
static int proc_link_path(const char *p) {
    if (!strncmp(p, "/dev/fd/", 8) && p[8]) return 1;
    if (!strncmp(p, "/dev/std", 8)) return 1;
    if (strncmp(p, "/proc/", 6)) return 0;
    const char *q = p + 6;
    for (int level = 0; level < 2; level++) {
        q += strcspn(q, "/");          /* past X (then Y) */
        if (*q != '/') return 0;
        q++;
        static const char *links[] = {"fd", "cwd", "root", "map_files"};
        for (size_t k = 0; k < sizeof links / sizeof *links; k++) {
            size_t len = strlen(links[k]);
            if (strncmp(q, links[k], len) || (q[len] && q[len] != '/')) continue;
            int folder = links[k][0] == 'f' || links[k][0] == 'm';  /* fd, map_files */
            return folder ? q[len] == '/' && q[len + 1] : 1;
        }
        if (strncmp(q, "task/", 5)) return 0;
        q += 5;
    }
    return 0;
}

/* Whether a squeezed path is a process's memory: /proc/X/mem or /proc/X/task/Y/mem. */
static int proc_mem_path(const char *p) {
    if (strncmp(p, "/proc/", 6)) return 0;
    const char *q = p + 6 + strcspn(p + 6, "/");
    if (!strncmp(q, "/task/", 6)) { q += 6; q += strcspn(q, "/"); }
    return !strcmp(q, "/mem");
}

/* A path the walk below could not follow because it crosses a link whose target lies in /proc
 * or /dev (a link the phase made to /proc/self/fd, /etc/mtab's to /proc/self/mounts): FULL with
 * its links followed one at a time, in the caller's root (ROOT), up to the first link into /proc
 * or /dev; that target with the rest of FULL after it ("." and ".." folded), in OUT: 1. -1: a
 * name is missing on the way (the kernel's walk finds it missing too); 2: every name is there now
 * (made since the walk failed: it is walked again); 0: anything else. Only a failed walk of a
 * path with a link in it comes here. */
static int expand_links(int root, const char *full, char *out, size_t cap) {
    char path[8300], prefix[8300], target[4096], joined[16800];
    squeeze(full, path, sizeof path);
    size_t done = 0;
    for (int hops = 0; hops < 40;) {
        if (path[done] != '/') return 0;
        size_t len = strcspn(path + done + 1, "/");
        if (!len) return 0;
        snprintf(prefix, sizeof prefix, "%.*s", (int)(done + 1 + len), path);
        struct { uint64_t flags, mode, resolve; } how = {O_PATH | O_NOFOLLOW | O_CLOEXEC, 0, 0x10};
        int fd = openat2_(root, prefix, &how, sizeof how);
        if (fd < 0) return errno == ENOENT ? -1 : 0;
        struct stat st;
        ssize_t n = fstat(fd, &st) == 0 && S_ISLNK(st.st_mode) ? readlinkat(fd, "", target, sizeof target - 1) : -1;
        close(fd);
        if (n < 0) {  /* not a link: the next component */
            done += 1 + len;
            if (!path[done]) return 2; /* it is all there now (made since the walk failed) */
            continue;
        }
        target[n] = 0;
        hops++;
        /* the target, against the folder holding the link when relative, then the rest */
        if (target[0] == '/') snprintf(joined, sizeof joined, "%s%s", target, path + done + 1 + len);
        else snprintf(joined, sizeof joined, "%.*s/%s%s", (int)done, path, target, path + done + 1 + len);
        /* fold "." and ".." (what comes before a ".." here was walked: no link) */
        char folded[8300];
        size_t o = 0;
        const char *q = joined;
        while (*q) {
            while (*q == '/') q++;
            size_t c = strcspn(q, "/");
            if (!c) break;
            if (c == 2 && q[0] == '.' && q[1] == '.') { while (o && folded[o - 1] != '/') o--; if (o) o--; }
            else if (!(c == 1 && q[0] == '.') && o + 1 + c < sizeof folded) {
                folded[o++] = '/';
                memcpy(folded + o, q, c);
                o += c;
            }
            q += c;
        }
        if (!o) folded[o++] = '/';
        folded[o] = 0;
        if (!strncmp(folded, "/proc/", 6) || !strncmp(folded, "/dev/", 5)) {
            snprintf(out, cap, "%s", folded);
            return 1;
        }
        snprintf(path, sizeof path, "%s", folded);
        done = 0;
    }
    return 0;
}

/* The walk of an open, as the kernel walks it for the caller: how its outcome is told. */
struct walk {
    int fd;          /* O_PATH descriptor of the file or folder reached (-1: none) */
    int missing;     /* the walk found a name missing before any link: ENOENT for the caller too */
    int crossed;     /* the walk crossed a link or ".." (what it reached is not the path as written) */
    int descriptor;  /* the path names one of the caller's descriptors (/proc/self/fd/N...) */
    int nofollow;    /* the caller's O_NOFOLLOW */
    int directory;   /* the caller's O_DIRECTORY */
    int must_dir;    /* the path as written ends in "/" or "/." (squeezed away) */
    uint64_t resolve_flags;  /* openat2's RESOLVE_NO_XDEV, _NO_MAGICLINKS, _NO_SYMLINKS */
    int error;       /* the errno of a walk that failed (0: it did not fail) */
    int proc_own;    /* reached through the caller's own /proc/self (checked to be the caller) */
    const char *why; /* unpinned: why the open is let go on (a finding) */
    const char *path;  /* what the walk reached, as a path (NULL: not known) */
};

/* The ids of KEY ("NStgid:", "NSpid:") in the status file PATH (from folder DIRFD): a process's
 * ids in its pid namespaces, outermost first. Returns how many (0: not read). */
static size_t ns_ids(int dirfd, const char *path, const char *key, unsigned long *ids, size_t cap) {
    char text[4096];
    int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return 0;
    ssize_t got = read(fd, text, sizeof text - 1);
    close(fd);
    if (got <= 0) return 0;
    text[got] = 0;
    char *at = strstr(text, key);
    if (!at || (at != text && at[-1] != '\n')) return 0;
    char *q = at + strlen(key), *stop = strchr(q, '\n');
    size_t n = 0;
    while (n < cap) {
        char *after;
        unsigned long one = strtoul(q, &after, 10);
        if (after == q || (stop && after > stop)) break;
        ids[n++] = one;
        q = after;
    }
    return n;
}

/* Whether PROCDIR, a folder /proc/N of some /proc, is process TGID (the tracer's pid): the same
 * pid namespace (its ns/pid link) and the same id in it (the last of NStgid), which no two
 * living processes share. */
static int same_process(int procdir, uint32_t tgid) {
    char theirs[64], mine[64], link[64], status[64];
    ssize_t a = readlinkat(procdir, "ns/pid", theirs, sizeof theirs);
    snprintf(link, sizeof link, "/proc/%u/ns/pid", tgid);
    ssize_t b = readlink(link, mine, sizeof mine);
    if (a <= 0 || a != b || memcmp(theirs, mine, (size_t)a)) return 0;
    unsigned long t[16], m[16];
    snprintf(status, sizeof status, "/proc/%u/status", tgid);
    size_t nt = ns_ids(procdir, "status", "NStgid:", t, 16), nm = ns_ids(AT_FDCWD, status, "NStgid:", m, 16);
    return nt && nm && t[nt - 1] == m[nm - 1];
}

/* The caller's own folder in the /proc of its root (what /proc/self names for it there): tried at
 * each of its ids, innermost pid namespace first, and checked (same_process). -1: none is.
 * *thread_id: the calling thread's id at that level (for /proc/thread-self). */
static int own_proc_dir(uint32_t pid, int root, unsigned long *thread_id) {
    uint32_t tgid = tgid_of(pid);
    unsigned long tg[16], td[16];
    char status[64];
    snprintf(status, sizeof status, "/proc/%u/status", tgid);
    size_t m = ns_ids(AT_FDCWD, status, "NStgid:", tg, 16);
    snprintf(status, sizeof status, "/proc/%u/status", pid);
    size_t k = ns_ids(AT_FDCWD, status, "NSpid:", td, 16);
    if (!m || k != m) return -1;
    for (size_t i = m; i-- > 0;) {
        char dir[64];
        snprintf(dir, sizeof dir, "/proc/%lu", tg[i]);
        struct { uint64_t flags, mode, resolve; } how = {O_PATH | O_DIRECTORY | O_CLOEXEC, 0,
                                                         0x10 | 0x04 /* IN_ROOT, NO_SYMLINKS */};
        int d = openat2_(root, dir, &how, sizeof how);
        if (d < 0) continue;
        struct statfs fs;
        if (fstatfs(d, &fs) == 0 && fs.f_type == 0x9fa0 && same_process(d, tgid)) {
            *thread_id = td[i];
            return d;
        }
        close(d);
    }
    return -1;
}

/* Whether squeezed path P names something of the caller's own /proc/self: /proc/self[/rest],
 * /proc/thread-self[/rest] (2), and /proc/net, /proc/mounts (/proc's links to self's). *rest:
 * what follows in self ("" or "/..."). 0: none. */
static int proc_self_path(const char *p, const char **rest, char *spare, size_t cap) {
    static const struct { const char *name; int kind; } names[] = {
        {"/proc/self", 1}, {"/proc/thread-self", 2}, {"/proc/net", 3}, {"/proc/mounts", 3}};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
        size_t len = strlen(names[k].name);
        if (strncmp(p, names[k].name, len) || (p[len] && p[len] != '/')) continue;
        if (names[k].kind < 3) { *rest = p + len; return names[k].kind; }
        snprintf(spare, cap, "%s", p + 5);  /* "/net..." or "/mounts..." */
        *rest = spare;
        return 1;
    }
    return 0;
}

/* Whether squeezed path P goes through the caller's own cwd or root link (/proc/self/cwd[/rest],
 * /proc/self/root[/rest], /proc/thread-self/...): the path it stands for in the caller's root,
 * in OUT ("<cwd>/rest": the cwd read as a relative open's base is, the process's own for self,
 * the thread's for thread-self; "/rest" for root). 0: not such a path; 1: rewritten; 2: rewritten,
 * and the link is P's last name; -1: the cwd cannot be told (removed, unreadable, too long). */
static int own_link(uint32_t pid, const char *p, char *out, size_t cap) {
    int thread = !strncmp(p, "/proc/thread-self/", 18);
    const char *own = !strncmp(p, "/proc/self/", 11) ? p + 11 : thread ? p + 18 : NULL;
    int cwd = own && !strncmp(own, "cwd", 3) && (!own[3] || own[3] == '/');
    int root = own && !strncmp(own, "root", 4) && (!own[4] || own[4] == '/');
    if (!cwd && !root) return 0;
    const char *tail = own + (cwd ? 3 : 4);  /* "" or "/rest" */
    ssize_t b = 0;
    if (cwd) {
        char link[64];
        snprintf(link, sizeof link, "/proc/%u/cwd", thread ? pid : tgid_of(pid));
        b = readlink(link, out, cap - 1);
        if (b <= 0 || (size_t)b >= cap - 1 || out[0] != '/' ||
            (b > 10 && !memcmp(out + b - 10, " (deleted)", 10)))
            return -1;
    }
    int n = snprintf(out + b, cap - (size_t)b, "/%s", *tail ? tail + 1 : "");
    if (n < 0 || (size_t)n >= cap - (size_t)b) return -1;
    return *tail && tail[1] ? 1 : 2;
}

static size_t resolve_in(uint32_t pid, const char *full, char *into, size_t cap, int *magic, struct walk *w,
                         int depth) {
    char link[96], norm[8300];
    const char *rest = NULL;
    unsigned long fd_no = 0;
    *magic = 0;
    squeeze(full, norm, sizeof norm);
    const char *sp = norm;
    /* the caller's own cwd and root links (/proc/self/cwd, /proc/thread-self/root, ...): the same
     * walk as the path they stand for (own_link), at one more depth. Fails closed (a finding)
     * where the kernel's answer could differ from that walk's: the caller's O_NOFOLLOW on the
     * link itself, openat2's RESOLVE_NO_MAGICLINKS or _NO_SYMLINKS, a removed or unreadable
     * folder, and a walk that failed for any reason but a missing name (the kernel jumps to the
     * folder through the link and checks no folder above it; the walk from "/" may be refused
     * or too long where the kernel's is not) */
    char stands[8300];
    int own = own_link(pid, norm, stands, sizeof stands);
    if (own) {
        int last = own > 1;  /* the link is the path's last name */
        if (own < 0 || depth >= 3 || (w && ((w->nofollow && last) || (w->resolve_flags & 0x06)))) {
            *magic = 1;
            return 0;
        }
        struct walk local = {.fd = -1};
        struct walk *ww = w ? w : &local;
        size_t got = resolve_in(pid, stands, into, cap, magic, ww, depth + 1);
        if (local.fd >= 0) close(local.fd);
        if (!got && !*magic && !ww->missing) *magic = 1;
        return got;
    }
    if (!strncmp(sp, "/proc/self/task/", 16) || !strncmp(sp, "/proc/thread-self/", 18)) {
        /* a thread of the caller's own: its descriptors are the process's */
        const char *t = sp + (sp[6] == 's' ? 16 : 18);
        if (sp[6] == 's') { t += strcspn(t, "/"); if (*t == '/') t++; }
        if (!strncmp(t, "fd/", 3)) rest = t + 3;
    } else if (!strncmp(sp, "/proc/self/fd/", 14)) rest = sp + 14;
    else if (!strncmp(sp, "/dev/fd/", 8)) rest = sp + 8;
    else if (!strcmp(sp, "/dev/stdin")) rest = "0";
    else if (!strcmp(sp, "/dev/stdout")) rest = "1";
    else if (!strcmp(sp, "/dev/stderr")) rest = "2";
    if (rest) {  /* the caller's own descriptor: its /proc/PID/fd/N (a trailing path is not followed) */
        char *end;
        fd_no = strtoul(rest, &end, 10);
        /* the descriptor's link is a magic link (reached through /dev/stdin's or /proc/self's
         * symlinks): RESOLVE_NO_MAGICLINKS or _NO_SYMLINKS, and O_NOFOLLOW on it as the last
         * name, are the kernel's ELOOP (ENOTDIR with O_DIRECTORY) */
        if (w && ((w->resolve_flags & 0x06) || (w->nofollow && end != rest && !*end))) {
            w->error = w->directory && !(w->resolve_flags & 0x06) ? ENOTDIR : ELOOP;
            return 0;
        }
        snprintf(link, sizeof link, "/proc/%u/fd/%lu", pid, fd_no);
        ssize_t n = end != rest && (!*end || *end == '/') ? readlink(link, into, cap - 1) : -1;
        if (n <= 0) { *magic = 1; return 0; }
        into[n] = 0;
        if (w) {  /* the descriptor itself (the kernel follows this link to it: no path is walked) */
            w->descriptor = 1;
            int fd = open(link, O_PATH | O_CLOEXEC);
            if (fd >= 0 && *end == '/') {  /* below a folder's descriptor: no link, no ".." */
                struct { uint64_t flags, mode, resolve; } how = {O_PATH | O_CLOEXEC | (w->nofollow ? O_NOFOLLOW : 0), 0,
                                                                 0x08 | 0x04 | 0x02 /* BENEATH, NO_SYMLINKS, _MAGICLINKS */};
                int sub = openat2_(fd, end + 1, &how, sizeof how);
                /* a link below it (or ".."): not walked from here, failed closed; any other
                 * failure is the caller's answer */
                if (sub < 0 && (errno == ELOOP || errno == EXDEV)) *magic = 1;
                else if (sub < 0) w->error = errno;
                close(fd);
                fd = sub;
            }
            if (fd >= 0) {
                char self[64];
                snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
                ssize_t m = readlink(self, into, cap - 1);
                if (m > 0) { into[m] = 0; w->fd = fd; return (size_t)m; }
                close(fd);
            }
        }
        if (*end == '/') snprintf(into + n, cap - (size_t)n, "%s", end);
        return strlen(into);
    }
    /* the caller's own /proc/self (/proc/thread-self, /proc/net, /proc/mounts): "self" names no
     * process for the tracer, outside the sandbox's PID namespace; so the caller's own folder in
     * its /proc is found (own_proc_dir: checked to be the caller) and the rest walked beneath it,
     * following no magic link. /proc/self/exe is the caller's program, reached through the
     * tracer's /proc. Where the caller's folder is not found: a finding. */
    char spare[8300];
    const char *self_rest = NULL;
    int self = proc_self_path(norm, &self_rest, spare, sizeof spare);
    if (self) {
        /* "self" is a link (RESOLVE_NO_SYMLINKS, or O_NOFOLLOW on it as the last name: ELOOP), and
         * /proc a mount of its own (RESOLVE_NO_XDEV: EXDEV), as the kernel answers */
        /* the link is the last name unless a trailing "/" (or "/.") follows it: then it is followed */
        int link_last = (!*self_rest || self_rest == spare) && !strchr(norm + 6, '/') && !(w && w->must_dir);
        if (w && ((w->resolve_flags & 0x04) || (w->nofollow && link_last))) {
            w->error = w->nofollow && link_last && w->directory && !(w->resolve_flags & 0x04) ? ENOTDIR : ELOOP;
            return 0;
        }
        if (w && (w->resolve_flags & 0x01)) { w->error = EXDEV; return 0; }
        if (!strcmp(self_rest, "/exe")) {
            if (w && (w->resolve_flags & 0x02)) { w->error = ELOOP; return 0; }
            if (w && w->must_dir) { w->error = ENOTDIR; return 0; }  /* "/proc/self/exe/" */
            snprintf(link, sizeof link, "/proc/%u/exe", self == 2 ? pid : tgid_of(pid));
            int fd = open(link, O_PATH | O_CLOEXEC | (w && w->nofollow ? O_NOFOLLOW : 0));
            if (fd < 0) { *magic = 1; return 0; }
            char self_fd[64];
            snprintf(self_fd, sizeof self_fd, "/proc/self/fd/%d", fd);
            ssize_t m = readlink(self_fd, into, cap - 1);
            if (m <= 0) { close(fd); *magic = 1; return 0; }
            into[m] = 0;
            if (w) { w->fd = fd; w->proc_own = 1; } else close(fd);
            return (size_t)m;
        }
        snprintf(link, sizeof link, "/proc/%u/root", pid);
        int root = open(link, O_PATH | O_DIRECTORY | O_CLOEXEC);
        unsigned long thread_id = 0;
        int dir = root >= 0 ? own_proc_dir(pid, root, &thread_id) : -1;
        if (root >= 0) close(root);
        if (dir < 0) { *magic = 1; return 0; }
        char below[8400];
        const char *tail = w && w->must_dir ? "/." : "";
        int wrote = self == 2 ? snprintf(below, sizeof below, "task/%lu%s%s", thread_id, self_rest, tail)
                              : snprintf(below, sizeof below, "%s%s", *self_rest ? self_rest + 1 : ".", tail);
        if (wrote < 0 || (size_t)wrote >= sizeof below) { close(dir); *magic = 1; return 0; }
        struct { uint64_t flags, mode, resolve; } how = {
            O_PATH | O_CLOEXEC | (w && w->nofollow ? O_NOFOLLOW : 0), 0,
            0x08 | 0x02 /* RESOLVE_BENEATH, _NO_MAGICLINKS */ | (w ? w->resolve_flags : 0)};
        int fd = openat2_(dir, below, &how, sizeof how);
        int walk_errno = errno;
        close(dir);
        if (fd < 0) {
            if (walk_errno == ELOOP || walk_errno == EXDEV) *magic = 1;  /* a magic link: ns/, fd/ */
            else if (w && walk_errno == ENOENT) w->missing = 1;
            else if (w) w->error = walk_errno;
            return 0;
        }
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t m = readlink(link, into, cap - 1);
        if (m <= 0) { close(fd); *magic = 1; return 0; }
        into[m] = 0;
        if (w) { w->fd = fd; w->proc_own = 1; } else close(fd);
        return (size_t)m;
    }
    snprintf(link, sizeof link, "/proc/%u/root", pid);
    int root = open(link, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0) return 0;
    struct { uint64_t flags, mode, resolve; } how = {
        O_PATH | O_CLOEXEC | (w && w->nofollow ? O_NOFOLLOW : 0), 0,
        0x10 /* RESOLVE_IN_ROOT */ | (w ? w->resolve_flags : 0)};
    int fd = openat2_(root, full, &how, sizeof how);
    int walk_errno = errno;
    /* what is judged as a /proc path: the path as written, or where its ".." lead by name (a walk
     * that found a name missing went through folders only, so there by name is where it went):
     * "/work/../proc/PID/fd/N/d/x" missing is not "no file" -- a descriptor N the phase opens
     * after the tracer's walk makes the kernel's own walk reach one (a finding, as for the path
     * spelled "/proc/PID/fd/N/d/x") */
    if (fd < 0 && walk_errno == ENOENT && strncmp(norm, "/proc/", 6)) {
        char lex[8300];
        fold_dots(norm, lex, sizeof lex);
        if (strcmp(lex, norm) && (!strncmp(lex, "/proc/", 6) || !strncmp(lex, "/dev/", 5))) {
            struct { uint64_t flags, mode, resolve; } bare = {O_PATH | O_CLOEXEC, 0, 0x10 | 0x04 /* IN_ROOT, NO_SYMLINKS */};
            int probe = openat2_(root, full, &bare, sizeof bare);
            if (probe >= 0) close(probe);
            else if (errno == ENOENT) snprintf(norm, sizeof norm, "%s", lex);
            errno = walk_errno;
        }
    }
    if (fd < 0 && (walk_errno == ENOENT || walk_errno == ELOOP || walk_errno == EXDEV) && strncmp(norm, "/proc/", 6) &&
        depth < 2) {
        /* a name missing, or a link the walk could not follow (into /proc, where "self" names no
         * process for the tracer outside the sandbox's PID namespace, and whose descriptor links
         * RESOLVE_IN_ROOT does not follow: ELOOP, EXDEV)? The same walk following no link:
         * ENOENT, a name is missing before any link; ELOOP, a link comes first */
        how.resolve |= 0x04; /* RESOLVE_NO_SYMLINKS */
        int probe = walk_errno == ENOENT ? openat2_(root, full, &how, sizeof how) : -1;
        int probe_errno = walk_errno == ENOENT ? errno : ELOOP;
        if (probe >= 0) close(probe);
        char expanded[8300];
        int expands = probe < 0 && probe_errno == ELOOP ? expand_links(root, full, expanded, sizeof expanded) : 0;
        if ((probe < 0 && probe_errno == ENOENT) || expands < 0) {
            if (w) w->missing = 1;
        } else if (expands > 0) {
            close(root);
            size_t got = resolve_in(pid, expands == 2 ? full : expanded, into, cap, magic, w, depth + 1);
            if (expands == 2) return got;
            /* a link into /proc or /dev that leads nowhere the tracer can follow: fail closed */
            if (!got && !(w && w->fd >= 0)) *magic = *magic || proc_link_path(expanded);
            return got;
        }
    }
    close(root);
    if (fd < 0) {
        if (w) w->error = walk_errno;
        /* RESOLVE_IN_ROOT does not follow /proc's descriptor links (ELOOP/EXDEV): fail closed */
        *magic = (!strncmp(norm, "/proc/", 6) && (walk_errno == ELOOP || walk_errno == EXDEV)) ||
                 proc_link_path(norm);
        return 0;
    }
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, into, cap - 1);
    if (w && n > 0) w->fd = fd;
    else close(fd);
    if (n <= 0) return 0;
    into[n] = 0;
    return (size_t)n;
}

/* The file a path names for PID (above); W (may be NULL): the walk's descriptor and outcome. */
static size_t resolve(uint32_t pid, const char *full, char *into, size_t cap, int *magic, struct walk *w) {
    return resolve_in(pid, full, into, cap, magic, w, 0);
}

/* Pinning an open (the file the kernel gives the caller is the file judged): the walk and the
 * caller's own walk of the same path are two walks, and a thread of the caller can change what
 * the path names between them (a link swapped, a folder renamed: seccomp_unotify(2) says CONTINUE
 * is no security decision). So for the opens a phase's program makes to read -- and the
 * machine's git's opens to read (O_RDONLY without O_CREAT, O_TRUNC: its object store, refs,
 * configs; judged by its gitread rows, from this same walk) -- the tracer opens the file its walk
 * reached -- reopening that walk's own descriptor, no second walk -- and hands the descriptor to the caller as the call's result
 * (SECCOMP_IOCTL_NOTIF_ADDFD with SECCOMP_ADDFD_FLAG_SEND, Linux 5.14+): the kernel walks nothing
 * more, and what was judged is what the caller holds (and, for the text of a HEAD or pointer file
 * of git's, what it reads: a sealed copy, git_seal). A name the walk found missing is answered
 * ENOENT the same way. Checks the kernel would make for the caller are made for it: its
 * permission by the mode bits (the tracer may be root; the caller has no capability), the mount's
 * read-only flag (the reopen goes through the sandbox's mount). What is not pinned goes on as
 * before (CONTINUE): FIFOs, devices and sockets (opening one has effects), O_CREAT of a missing
 * name, O_PATH and write-only opens (reported for write_row only), paths through another process's /proc entry
 * (an unresolved row already); of the machine's git, its opens to write (O_WRONLY, O_RDWR,
 * O_CREAT, O_TRUNC) and openat2 (git calls none). */
#define IOCTL_ADDFD 0x40182103UL
#define ADDFD_FLAG_SEND 2U
struct notif_addfd { uint64_t id; uint32_t flags, srcfd, newfd, newfd_flags; };
struct reply { int fd, error, cloexec; };
static int pin_off;   /* the kernel refused ADDFD with SEND: every open goes on (CONTINUE) */
static int pin_some;  /* EVOTREE_TRACE_PIN=uncertain: only opens whose walk crossed a link, "..",
                       * a descriptor, or reached git storage (benchmarks; not sound) */

/* The phase's credentials, as the kernel checks them (read once: a process without capabilities
 * under no_new_privs cannot change them) */
static struct { int read; uint32_t uid, gid; uint32_t groups[64]; size_t ngroups; } creds;

static void read_creds(uint32_t pid) {
    char proc[64], text[4096];
    snprintf(proc, sizeof proc, "/proc/%u/status", pid);
    int fd = open(proc, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return;
    ssize_t got = read(fd, text, sizeof text - 1);
    close(fd);
    if (got <= 0) return;
    text[got] = 0;
    unsigned long v[4];
    char *u = strstr(text, "\nUid:"), *g = strstr(text, "\nGid:"), *gs = strstr(text, "\nGroups:");
    if (!u || !g || sscanf(u + 5, "%lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3]) != 4) return;
    creds.uid = (uint32_t)v[3]; /* the file-system uid */
    if (sscanf(g + 5, "%lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3]) != 4) return;
    creds.gid = (uint32_t)v[3];
    creds.ngroups = 0;
    if (gs) {
        char *q = gs + 8, *stop = strchr(q, '\n');
        while (creds.ngroups < 64) {
            char *after;
            unsigned long one = strtoul(q, &after, 10);
            if (after == q || (stop && after > stop)) break;
            creds.groups[creds.ngroups++] = (uint32_t)one;
            q = after;
        }
    }
    creds.read = 1;
}

/* Whether the caller's credentials allow WANT (4 read, 2 write) on a file of mode/owner ST. */
static int caller_may(const struct stat *st, int want) {
    int bits;
    if (st->st_uid == creds.uid) bits = (int)(st->st_mode >> 6) & 7;
    else {
        int member = st->st_gid == creds.gid;
        for (size_t k = 0; k < creds.ngroups && !member; k++) member = creds.groups[k] == st->st_gid;
        bits = (int)(member ? st->st_mode >> 3 : st->st_mode) & 7;
    }
    return (bits & want) == want;
}

/* Whether descriptor FD (of device DEV) is a file of a /proc. A /proc has an anonymous device
 * (major 0, as tmpfs and sysfs have; numbers that are reused once unmounted): only those are
 * asked (fstatfs), a file of a disk never. */
static int on_procfs(int fd, dev_t dev) {
    if (major(dev) != 0) return 0;
    struct statfs fs;
    return fstatfs(fd, &fs) != 0 || fs.f_type == 0x9fa0 /* PROC_SUPER_MAGIC; not known: not pinned */;
}

/* Whether the caller (PID) has a controlling terminal (field 7 of /proc/PID/stat, tty_nr). -1:
 * not known. */
static int has_terminal(uint32_t pid) {
    char proc[64], text[1024];
    snprintf(proc, sizeof proc, "/proc/%u/stat", pid);
    int fd = open(proc, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    ssize_t got = read(fd, text, sizeof text - 1);
    close(fd);
    if (got <= 0) return -1;
    text[got] = 0;
    char *q = strrchr(text, ')');
    long tty = -1;
    if (q && sscanf(q + 1, " %*c %*d %*d %*d %ld", &tty) == 1) return tty != 0;
    return -1;
}

/* The entries of a process's /proc folder that the kernel checks against the opener when it is
 * opened or followed (ptrace_may_access): the tracer owns the sandbox's user namespace, so its
 * open would pass where the caller's may not (a process that made itself non-dumpable). */
static int checked_at_open(const char *entry) {
    static const char *names[] = {"environ", "auxv", "mem", "maps", "smaps", "smaps_rollup", "numa_maps",
                                  "pagemap", "fdinfo", "ns", "fd", "cwd", "root", "exe", "map_files"};
    size_t len = strcspn(entry, "/");
    for (size_t k = 0; k < sizeof names / sizeof *names; k++)
        if (strlen(names[k]) == len && !strncmp(entry, names[k], len)) return 1;
    return 0;
}

/* The kernel's own checks of an open's arguments, made before any walk (build_open_flags and
 * openat2's copy of open_how): the error it answers, 0 when they pass. Answered by the tracer
 * (an openat2's open_how could change after the tracer read it). NR: the call; HOW: openat2's
 * flags, mode, resolve; SIZE: its size argument; TAIL_NONZERO: bytes past the struct it knows
 * are not all zero. */
#if defined(__x86_64__)
#define KERNEL_O_LARGEFILE 0100000ULL
#else
#define KERNEL_O_LARGEFILE 0400000ULL
#endif
/* the kernel's __O_TMPFILE bit alone (glibc's __O_TMPFILE includes O_DIRECTORY) */
#define KERNEL_TMPFILE_BIT 020000000ULL
static int kernel_at_least_6_4 = -1;

static int open_arguments_refused(int nr, uint64_t flags, const uint64_t *how, uint64_t size, int tail_nonzero) {
    if (kernel_at_least_6_4 < 0) {
        struct utsname u;
        int major_v = 0, minor_v = 0;
        kernel_at_least_6_4 = uname(&u) == 0 && sscanf(u.release, "%d.%d", &major_v, &minor_v) == 2 &&
                              (major_v > 6 || (major_v == 6 && minor_v >= 4));
    }
    uint64_t valid = (uint64_t)(O_ACCMODE | O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_APPEND | O_NONBLOCK | O_DSYNC |
                                O_SYNC | O_ASYNC | O_DIRECT | O_DIRECTORY | O_NOFOLLOW | O_NOATIME | O_CLOEXEC |
                                O_PATH | __O_TMPFILE) | KERNEL_O_LARGEFILE;
    if (nr == NR_OPENAT2) {
        if (size < 24) return EINVAL;
        if (size > 4096 || tail_nonzero) return E2BIG;
        if (flags & ~valid) return EINVAL;
        if (how[2] & ~0x3fULL) return EINVAL;                   /* RESOLVE_* known: 0x01-0x20 */
        if ((how[2] & 0x18) == 0x18) return EINVAL;             /* BENEATH with IN_ROOT */
        if (flags & (O_CREAT | KERNEL_TMPFILE_BIT)) { if (how[1] & ~07777ULL) return EINVAL; }
        else if (how[1]) return EINVAL;                         /* a mode without a file made */
        if ((flags & O_PATH) && (flags & ~(uint64_t)(O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC))) return EINVAL;
    }
    if (flags & O_PATH) return 0;  /* open/openat drop every other flag of an O_PATH open */
    if (flags & KERNEL_TMPFILE_BIT) {
        if ((flags & (KERNEL_TMPFILE_BIT | O_DIRECTORY | O_CREAT)) != (KERNEL_TMPFILE_BIT | O_DIRECTORY)) return EINVAL;
        if ((flags & O_ACCMODE) == O_RDONLY) return EINVAL;      /* a file made unnamed must be written */
    } else if (kernel_at_least_6_4 && (flags & (O_CREAT | O_DIRECTORY)) == (uint64_t)(O_CREAT | O_DIRECTORY)) {
        return EINVAL;
    }
    return 0;
}

/* Whether squeezed path P is a /proc file of the opener's namespaces, not the file's: the SysV
 * IPC listings and the sysctls of the IPC, UTS, network and user namespaces, looked up (or
 * taken at open) in the walker's and opener's namespaces -- the tracer's are the host's. */
static int proc_namespaced(const char *p) {
    static const char *prefixes[] = {"/proc/sysvipc", "/proc/sys/net", "/proc/sys/user", "/proc/sys/fs/mqueue",
                                     "/proc/sys/kernel/hostname", "/proc/sys/kernel/domainname",
                                     "/proc/sys/kernel/shm", "/proc/sys/kernel/msg", "/proc/sys/kernel/sem",
                                     "/proc/sys/kernel/auto_msgmni", "/proc/sys/kernel/ns_last_pid"};
    for (size_t k = 0; k < sizeof prefixes / sizeof *prefixes; k++)
        if (!strncmp(p, prefixes[k], strlen(prefixes[k]))) return 1;
    return 0;
}

/* Whether the tracer may open the /proc file PATH (what the walk reached; DEV its device) for
 * PID as the kernel would: a file of no process; a file of a process that the kernel does not
 * check against its opener; or the caller's own (the kernel lets a process read its own). Not
 * /proc/keys and /proc/key-users, which list what the opener's credentials may see. */
static int proc_lends_nothing(uint32_t pid, const char *path, dev_t dev) {
    if (path && !strcmp(path, "/proc")) return 1;  /* the listing of the processes */
    if (!path || strncmp(path, "/proc/", 6)) return 0;
    const char *q = path + 6;
    size_t digits = strspn(q, "0123456789");
    if (!digits) {
        size_t len = strcspn(q, "/");
        return !(len == 4 && !strncmp(q, "keys", 4)) && !(len == 9 && !strncmp(q, "key-users", 9));
    }
    if (q[digits] && q[digits] != '/') return 0;
    const char *entry = q[digits] ? q + digits + 1 : "";
    if (!strncmp(entry, "task/", 5)) {  /* a thread's entries: /proc/N/task/T/... */
        entry += 5 + strspn(entry + 5, "0123456789");
        entry += *entry == '/';
    }
    if (!checked_at_open(entry)) return 1;
    /* another process's, or the caller's own under its number? */
    char dir[64], link[64];
    snprintf(dir, sizeof dir, "/proc/%.*s", (int)digits, q);
    snprintf(link, sizeof link, "/proc/%u/root", pid);
    int root = open(link, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0) return 0;
    struct { uint64_t flags, mode, resolve; } how = {O_PATH | O_DIRECTORY | O_CLOEXEC, 0, 0x10 | 0x04};
    int d = openat2_(root, dir, &how, sizeof how);
    close(root);
    if (d < 0) return 0;
    struct stat st;
    int own = fstat(d, &st) == 0 && st.st_dev == dev && same_process(d, tgid_of(pid));
    close(d);
    return own;
}

/* The answer to an open whose walk is W (flags: the caller's): a descriptor of what the walk
 * reached, or an error; where neither can be given as the kernel would, W->why is set (the open
 * is let go on, CONTINUE, and its row is a finding: the kernel reads the path again, which the
 * caller can have rewritten in its memory since the tracer read it). */
static void pin(uint32_t pid, struct walk *w, uint64_t flags, struct reply *rep) {
    if (w->fd < 0) {
        if (w->missing && !(flags & O_CREAT)) rep->error = ENOENT;
        else if (w->error && !w->missing) rep->error = w->error;  /* ENOTDIR, ELOOP, EACCES... */
        else if (!w->why) w->why = "its walk reached nothing";
        return;
    }
    struct stat st;
    if (fstat(w->fd, &st) != 0) { w->why = "what its walk reached cannot be read"; return; }
    if (S_ISLNK(st.st_mode)) {
        if (w->nofollow) rep->error = (flags & O_DIRECTORY) ? ENOTDIR : ELOOP;
        else w->why = "its walk ended at a link";
        return;
    }
    int acc = (int)(flags & O_ACCMODE);
    /* A file of /proc: opened by the tracer (reopening the walk's descriptor) where that lends
     * the caller nothing (proc_lends_nothing), only to read (a /proc file written with the
     * tracer's credentials would be the tracer's write: uid_map, setgroups) */
    if (on_procfs(w->fd, st.st_dev)) {
        if (acc != O_RDONLY) { w->why = "a /proc file opened to write"; return; }
        if (!w->proc_own && !proc_lends_nothing(pid, w->path, st.st_dev)) {
            w->why = "a /proc file the kernel checks against its opener, not the caller's own";
            return;
        }
    }
    int dir = S_ISDIR(st.st_mode);
    int special = !dir && !S_ISREG(st.st_mode);
    /* A FIFO, device or socket: a socket is not opened (ENXIO, the kernel's answer); /dev/tty is
     * the caller's controlling terminal (ENXIO when it has none, as in the sandbox's new
     * session; a finding otherwise: the tracer's is not the caller's); a FIFO whose open would
     * wait for a writer (read-only, blocking, by name) is a finding, since the tracer's one
     * thread cannot wait; every other device, terminal and FIFO is opened by the tracer
     * (O_NONBLOCK, O_NOCTTY; O_NONBLOCK taken back after) */
    if (special) {
        if (S_ISSOCK(st.st_mode)) { rep->error = ENXIO; return; }
        if (S_ISCHR(st.st_mode) && major(st.st_rdev) == 5 && minor(st.st_rdev) == 0) {
            if (has_terminal(pid) == 0) rep->error = ENXIO;
            else w->why = "/dev/tty of a process with a controlling terminal";
            return;
        }
        if (S_ISFIFO(st.st_mode) && acc == O_RDONLY && !(flags & O_NONBLOCK) && !w->descriptor) {
            w->why = "a FIFO opened by name to read (its open waits for a writer)";
            return;
        }
    }
    if ((flags & O_DIRECTORY) && !dir) { rep->error = ENOTDIR; return; }
    if (!creds.read) read_creds(pid);
    if (!creds.read) { w->why = "the caller's credentials cannot be read"; return; }
    int want = (acc == O_RDONLY ? 4 : acc == O_RDWR ? 6 : 2) | ((flags & O_TRUNC) ? 2 : 0);
    if (!caller_may(&st, want)) { rep->error = EACCES; return; }
    if ((flags & O_NOATIME) && st.st_uid != creds.uid) { rep->error = EPERM; return; }
    int keep = O_ACCMODE | O_APPEND | O_NONBLOCK | O_DSYNC | O_SYNC | O_DIRECT | O_NOATIME | O_TRUNC | O_DIRECTORY;
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", w->fd);
    /* an open may wait -- a device's, a file's under a lease the phase holds (the lease break,
     * up to lease-break-time): never in the tracer, whose one thread serves the whole box; opened
     * O_NONBLOCK (EWOULDBLOCK instead of the wait), which is taken back after when the caller
     * did not ask for it. A file that would make its opener wait is a finding (the wait would
     * be the caller's, in the kernel's open of a path it reads again) */
    int fd = open(self, ((int)flags & keep) | O_CLOEXEC | O_NOCTTY | O_LARGEFILE | O_NONBLOCK);
    if (fd < 0 && errno == EWOULDBLOCK && !(flags & O_NONBLOCK)) {
        w->why = "a file under a lease (its open waits)";
        return;
    }
    if (fd < 0) { rep->error = errno; return; }
    if (!(flags & O_NONBLOCK)) fcntl(fd, F_SETFL, (int)flags & (O_APPEND | O_DIRECT | O_NOATIME));
    rep->fd = fd;
    rep->cloexec = (flags & O_CLOEXEC) != 0;
}

/* O_CREAT of a name the walk found missing: the tracer makes the file itself, in the folder its
 * walk reaches (O_EXCL, no link followed), with the caller's mode less its umask, and hands it
 * over; what the kernel would answer otherwise (a folder missing, EACCES, EROFS) is the answer.
 * Only where the file is the caller's own either way (the tracer's uid and gid are the caller's).
 * Returns 1 when answered, 0 when the name is there now (made since the walk: walked again and
 * pinned), -1 when not done (the call goes on). */
static int create_pinned(uint32_t pid, const char *full, uint64_t flags, uint64_t mode, struct reply *rep) {
    if (!creds.read) read_creds(pid);
    if (!creds.read || creds.uid != (uint32_t)geteuid() || creds.gid != (uint32_t)getegid()) return -1;
    char parent[8300], link[64];
    squeeze(full, parent, sizeof parent);
    char *slash = strrchr(parent, '/');
    if (!slash || !slash[1] || !strcmp(slash + 1, "..")) return -1;
    char name[4096];
    snprintf(name, sizeof name, "%s", slash + 1);
    if (slash == parent) slash[1] = 0; else *slash = 0;
    snprintf(link, sizeof link, "/proc/%u/root", pid);
    int root = open(link, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0) return -1;
    struct { uint64_t flags, mode, resolve; } how = {O_PATH | O_DIRECTORY | O_CLOEXEC, 0, 0x10 /* RESOLVE_IN_ROOT */};
    int dir = openat2_(root, parent, &how, sizeof how);
    int walk_errno = errno;
    close(root);
    if (dir < 0) { rep->error = walk_errno; return 1; }
    struct stat st;
    if (fstat(dir, &st) != 0 || !caller_may(&st, 3)) { close(dir); rep->error = EACCES; return 1; }
    /* the caller's umask (022 when it cannot be read) */
    char proc[64], text[4096];
    unsigned umask_of = 022;
    snprintf(proc, sizeof proc, "/proc/%u/status", pid);
    int sfd = open(proc, O_RDONLY | O_CLOEXEC);
    ssize_t got = sfd >= 0 ? read(sfd, text, sizeof text - 1) : -1;
    if (sfd >= 0) close(sfd);
    if (got > 0) {
        text[got] = 0;
        char *u = strstr(text, "\nUmask:");
        if (u) umask_of = (unsigned)strtoul(u + 7, NULL, 8);
    }
    int keep = O_ACCMODE | O_APPEND | O_NONBLOCK | O_DSYNC | O_SYNC | O_DIRECT | O_NOATIME | O_TRUNC;
    int fd = openat(dir, name, ((int)flags & keep) | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY | O_LARGEFILE,
                    (mode_t)(mode & 07777 & ~umask_of));
    int made_errno = errno;
    close(dir);
    if (fd >= 0) { rep->fd = fd; rep->cloexec = (flags & O_CLOEXEC) != 0; return 1; }
    if (made_errno == EEXIST) return 0;
    rep->error = made_errno;
    return 1;
}

/* What the machine's git reads of a repository's layout: the HEAD files, references and object
 * stores it opens. The audit judges them against the task repositories (a HEAD or reference of the
 * phase's own over a task repository's objects: harness/audit/trace.py judge_git_reads). Each is
 * a "gitread" row with the identity (device, inode) of the file or folder the path names, walked
 * from outside in the caller's root at every such open while the caller waits (resolve_at), and
 * for a HEAD its first bytes. Rows are kept short: per process, one for each file or folder
 * reached (and each text of a HEAD); of an object store, the folder that holds what is read. */
#define GITREAD_SEEN 32
/* The walk an open of the machine's git was answered from (pinned): FD its O_PATH descriptor (-1:
 * answered with an error, nothing handed over), RESOLVED the path it reached; for a HEAD or
 * pointer file, CONTENT and CONTENT_LEN the bytes git was handed (git_seal; -1: none sealed). */
struct git_pin { int fd; const char *resolved; const char *content; ssize_t content_len; };
#define GITREAD_PROCS 256
#define GITREAD_ROWS_LIMIT 200000
struct gitread_seen { uint32_t tgid; unsigned count; uint64_t hash[GITREAD_SEEN]; };
static struct gitread_seen gitread_seen[GITREAD_PROCS];
static unsigned long gitread_rows;

/* Forget what process TGID read (its exec or its end: a new program reads afresh). */
static void gitread_forget(uint32_t tgid) {
    struct gitread_seen *g = &gitread_seen[tgid % GITREAD_PROCS];
    if (g->tgid == tgid) g->tgid = 0;
}

/* Whether process TGID already had a row for what is hashed H (and note it when not). A slot of
 * another process is taken over (its rows are written again: more rows, never fewer); past
 * GITREAD_SEEN distinct ones, each further one is written every time. */
static int gitread_once(uint32_t tgid, uint64_t h) {
    struct gitread_seen *g = &gitread_seen[tgid % GITREAD_PROCS];
    if (g->tgid != tgid) { g->tgid = tgid; g->count = 0; }
    for (unsigned k = 0; k < g->count; k++)
        if (g->hash[k] == h) return 1;
    if (g->count < GITREAD_SEEN) g->hash[g->count++] = h;
    return 0;
}

/* git's state pointers (a commit git acts on with no revision on its command line: am --abort
 * resets to ORIG_HEAD, log --merge walks to MERGE_HEAD ...): HEAD-like files, sealed and their
 * text in the row (the audit judges what they name: trace_beside.py) */
static const char *GIT_STATE_FILES[] = {"ORIG_HEAD", "MERGE_HEAD", "FETCH_HEAD", "CHERRY_PICK_HEAD",
                                        "REVERT_HEAD", "REBASE_HEAD", "AUTO_MERGE", "BISECT_HEAD"};

/* Whether REL (a path under a ".git" folder's objects/) is of an object store's layout: its last
 * name a fan-out folder or a loose object in one, a pack or its companion (pack-*, tmp_*,
 * multi-pack-index*), a folder or file of info/ (alternates, packs, commit graphs), pack/, info/
 * or a push's quarantine (incoming-*); any folder above it may be a store of the phase's own
 * (GIT_OBJECT_DIRECTORY=.git/objects/mine: judged by the identity of what git read there). */
static int git_object_layout(const char *rel) {
    const char *leaf = strrchr(rel, '/');
    leaf = leaf ? leaf + 1 : rel;
    size_t hex = strspn(leaf, "0123456789abcdef");
    if (hex == 2 && !leaf[2]) return 1;
    if (hex >= 38 && !leaf[hex] && leaf - rel >= 3 && leaf[-1] == '/' && strspn(leaf - 3, "0123456789abcdef") == 2 &&
        (leaf - 3 == rel || leaf[-4] == '/'))
        return 1;
    if (strstr(rel, "commit-graphs/") == rel || strstr(rel, "/commit-graphs/")) return 1;
    static const char *names[] = {"pack", "info", "alternates", "http-alternates", "packs", "commit-graph", "commit-graphs"};
    for (size_t k = 0; k < sizeof names / sizeof *names; k++)
        if (!strcmp(leaf, names[k])) return 1;
    if (!strncmp(leaf, "pack-", 5) || !strncmp(leaf, "tmp_", 4) || !strncmp(leaf, "multi-pack-index", 16) ||
        !strncmp(leaf, "incoming-", 9) || !strncmp(leaf, "graph-", 6))
        return 1;
    return 0;
}

/* Whether REL (a path under a ".git" folder, normalized: git_rel_norm) is a file git could read
 * as a revision that git_layout's other rules leave out (red team of 66d31ff: K, N): git 2.39's
 * dwim rule "%.*s" reads <common dir>/NAME for any name not of pseudo-reference syntax (my_head,
 * foo/bar, hooks/x, worktrees/w/my_head, even index or description), and the phase can write
 * there. Left to other rules: config (git dies on a config that is an id; locked), packed-refs,
 * refs/ and reftable/ (references, by identity), commondir and info/grafts (by their text), the
 * object store's own layout (by identity), reflogs (logs/HEAD, logs/refs/); lock files (git
 * refuses a revision name ending ".lock"); modules/ (a submodule's git directory: residual).
 * 1, or 'q' under objects/ (a folder there is a store's: git_object_layout), or 0. */
static int git_planted(const char *rel) {
    size_t n = strlen(rel);
    if (!n || (n > 5 && !strcmp(rel + n - 5, ".lock"))) return 0;
    const char *slash = strchr(rel, '/');
    size_t first = slash ? (size_t)(slash - rel) : n;
    const char *rest = slash ? slash + 1 : "";
#define GIT_FIRST(s) (first == sizeof(s) - 1 && !strncmp(rel, s, first))
    if ((GIT_FIRST("config") && !slash) || GIT_FIRST("packed-refs") || GIT_FIRST("commondir") || GIT_FIRST("refs") ||
        GIT_FIRST("reftable") || GIT_FIRST("modules"))
        return 0;
    if (GIT_FIRST("objects")) return slash && !git_object_layout(rest) ? 'q' : 0;
    if (GIT_FIRST("logs")) return slash && strcmp(rest, "HEAD") && strncmp(rest, "refs/", 5);
    if (GIT_FIRST("info")) return slash && strcmp(rest, "grafts");
    if (GIT_FIRST("worktrees") && slash) {  /* worktrees/<id>/<in>: the worktree's own folder */
        const char *in = strchr(rest, '/');
        if (!in) return 1;
        in++;
        return strcmp(in, "commondir") && strncmp(in, "refs/", 5) && strncmp(in, "logs/refs/", 10);
    }
#undef GIT_FIRST
    return 1;
}

/* The part of PATH under its last ".git" folder (".git/..." or ".../.git/..."), or NULL. */
static const char *git_dir_rel(const char *p) {
    const char *rel = strncmp(p, ".git/", 5) ? NULL : p + 5;
    for (const char *s = p; (s = strstr(s, "/.git/")) != NULL; s += 5) rel = s + 6;
    return rel;
}

/* REL with its empty, "." and ".." names taken out as written (".git//./x", ".git/objects/../x":
 * git joins GIT_DIR as given) into OUT; 0 when it leaves its folder or does not fit. */
static int git_rel_norm(const char *rel, char *out, size_t cap) {
    size_t len = 0;
    out[0] = 0;
    while (*rel) {
        size_t k = strcspn(rel, "/");
        if (k == 2 && !strncmp(rel, "..", 2)) {
            if (!len) return 0;
            while (len && out[len - 1] != '/') len--;
            if (len) len--;
            out[len] = 0;
        } else if (k && !(k == 1 && rel[0] == '.')) {
            if (len + k + 2 > cap) return 0;
            if (len) out[len++] = '/';
            memcpy(out + len, rel, k);
            len += k;
            out[len] = 0;
        }
        rel += k;
        while (*rel == '/') rel++;
    }
    return 1;
}

/* Which part of a repository's layout PATH (as git wrote it) is: 'h' a HEAD file or a state
 * pointer (GIT_STATE_FILES, rebase-merge/orig-head, rebase-apply/orig-head; in a git directory
 * any pseudo-reference and any file of a sequencer, rebase or am session), 'p' a file under a
 * ".git" folder git could read as a revision (git_planted: HEAD-like, sealed whatever its size),
 * 'r' a reference
 * (refs/, packed-refs, reftable/), 'o' something of an object store (*dir_len: the length of the
 * store's folder in PATH), 'c' a commondir or info/grafts, 0 none. */
static int git_layout(const char *p, size_t n, size_t *dir_len) {
    const char *base = strrchr(p, '/');
    base = base ? base + 1 : p;
    if (!strcmp(base, "HEAD")) return 'h';
    for (size_t k = 0; k < sizeof GIT_STATE_FILES / sizeof *GIT_STATE_FILES; k++)
        if (!strcmp(base, GIT_STATE_FILES[k])) return 'h';
    if (!strcmp(base, "orig-head") && base - p >= 13 &&
        (!strncmp(base - 13, "rebase-merge/", 13) || !strncmp(base - 13, "rebase-apply/", 13)))
        return 'h';
    /* in a git directory (a path through ".git/" or a worktree's folder, or relative "./"): any
     * pseudo-reference (a one-level name of capitals and '_': git resolves "MY_HEAD" as a file
     * there), and every file of a rebase, am or cherry-pick/revert session (the todo lists name
     * the commits git will apply with no revision on its command line): HEAD-like, sealed and
     * their text in the row (red team of b44d85d: C, G, H) */
    int in_gitdir = strstr(p, ".git/") || strstr(p, "/worktrees/") || !strncmp(p, "worktrees/", 10) ||
                    !strncmp(p, "./", 2);
    if (in_gitdir) {
        int pseudo = base[0] >= 'A' && base[0] <= 'Z';
        for (const char *c = base; *c && pseudo; c++) pseudo = (*c >= 'A' && *c <= 'Z') || *c == '_';
        if (pseudo) return 'h';
        if (strstr(p, "/sequencer/") || strstr(p, "/rebase-merge/") || strstr(p, "/rebase-apply/") ||
            !strncmp(p, "sequencer/", 10) || !strncmp(p, "rebase-merge/", 13) || !strncmp(p, "rebase-apply/", 13))
            return 'h';
        /* a file under the ".git" folder git could read as a revision (git_planted): 'p',
         * HEAD-like (sealed whatever its size, the start of its text in the row, judged by what
         * it names) */
        const char *rel = git_dir_rel(p);
        char norm[4096];
        int planted = rel && git_rel_norm(rel, norm, sizeof norm) ? git_planted(norm) : 0;
        if (planted) return planted == 'q' ? 'q' : 'p';
    }
    /* what points git elsewhere: a commondir (another git directory's references and objects),
     * a graft file (commits given other parents) */
    if (!strcmp(base, "commondir") || (n >= 11 && !strcmp(p + n - 11, "info/grafts"))) return 'c';
    if (!strcmp(base, "packed-refs") || !strncmp(p, "refs/", 5) || strstr(p, "/refs/") ||
        !strncmp(p, "reftable/", 9) || strstr(p, "/reftable/") || !strcmp(base, "refs") || !strcmp(base, "reftable"))
        return 'r';
    const char *o = strstr(p, "/objects/");
    if (o) { *dir_len = (size_t)(o - p) + 8; return 'o'; }
    if (!strncmp(p, "objects/", 8)) { *dir_len = 7; return 'o'; }
    if (n > 8 && !strcmp(p + n - 8, "/objects")) { *dir_len = n; return 'o'; }
    /* a store under another name (GIT_OBJECT_DIRECTORY, alternates): its pack folder, its
     * info/alternates, a loose object .../xx/<38 or more hex> */
    const char *pk = strstr(p, "/pack/");
    if (pk) { *dir_len = (size_t)(pk - p); return 'o'; }
    if (n > 5 && !strcmp(p + n - 5, "/pack")) { *dir_len = n - 5; return 'o'; }
    if (n > 16 && !strcmp(p + n - 16, "/info/alternates")) { *dir_len = n - 16; return 'o'; }
    size_t hex = 0;
    while (hex < n && ((p[n - 1 - hex] >= '0' && p[n - 1 - hex] <= '9') || (p[n - 1 - hex] >= 'a' && p[n - 1 - hex] <= 'f'))) hex++;
    if (hex >= 38 && hex == strlen(base) && base - p >= 4 && base[-1] == '/') {
        const char *xx = base - 3;
        int ok = (xx[0] >= '0' && xx[0] <= '9') || (xx[0] >= 'a' && xx[0] <= 'f');
        ok = ok && ((xx[1] >= '0' && xx[1] <= '9') || (xx[1] >= 'a' && xx[1] <= 'f'));
        if (ok && (xx == p || xx[-1] == '/')) { *dir_len = xx == p ? 0 : (size_t)(xx - 1 - p); return 'o'; }
    }
    return 0;
}

/* The file or folder FULL names for PID, walked as the kernel walks it in PID's root (openat2
 * RESOLVE_IN_ROOT, O_PATH: nothing opened for reading); -1 when it cannot be walked. */
static int resolve_at(uint32_t pid, const char *full) {
    char link[64];
    snprintf(link, sizeof link, "/proc/%u/root", pid);
    int root = open(link, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0) return -1;
    struct { uint64_t flags, mode, resolve; } how = {O_PATH | O_CLOEXEC, 0, 0x10 /* RESOLVE_IN_ROOT */};
    int fd = openat2_(root, full, &how, sizeof how);
    close(root);
    return fd;
}

/* The folder a relative PATH of call N starts from -- its cwd, or its directory descriptor's
 * folder -- in BASE ("" for an absolute path, or when it cannot be read). */
static void open_base(const struct notif *n, const char *path, char *base, size_t cap) {
    base[0] = 0;
    if (path[0] == '/') return;
    char proc[64];
    int dirfd = n->nr == NR_OPEN ? -100 : (int)n->args[0];
    if (dirfd == -100) snprintf(proc, sizeof proc, "/proc/%u/cwd", n->pid);
    else snprintf(proc, sizeof proc, "/proc/%u/fd/%d", n->pid, dirfd);
    ssize_t b = readlink(proc, base, cap - 1);
    base[b < 0 ? 0 : b] = 0;
}

/* git_layout for call N (RESOLVED: the path its walk reached, or NULL): a path "./NAME" (git's
 * git directory is the folder it starts from: GIT_DIR=., or git run in .git/ itself) that git
 * could read as a revision (git_planted) is 'p' too when that folder is a git directory (HEAD and
 * objects/ in it): git reads ./my_head as a revision there (red team of 66d31ff, K with
 * GIT_DIR=.); so is a path git_layout does not know whose walk reached such a file under a
 * ".git" folder (a link of the phase's own: GIT_DIR=/tmp/g, /tmp/g -> the task's .git). */
static int git_layout_of(const struct notif *n, const char *p, size_t len, size_t *dir_len, const char *resolved) {
    int what = git_layout(p, len, dir_len);
    char norm[4096];
    /* a path through a link of the phase's own to a ".git" folder (GIT_DIR=/tmp/g, g -> .git):
     * judged by the file the walk reached */
    const char *real = !what && resolved && *resolved ? git_dir_rel(resolved) : NULL;
    int through = real && git_rel_norm(real, norm, sizeof norm) ? git_planted(norm) : 0;
    if (through) return through == 'q' ? 'q' : 'p';
    int planted = what || strncmp(p, "./", 2) || !git_rel_norm(p, norm, sizeof norm) ? 0 : git_planted(norm);
    if (!planted) return what;
    char where[96];
    int dirfd = n->nr == NR_OPEN ? -100 : (int)n->args[0];
    int at = dirfd == -100 ? snprintf(where, sizeof where, "/proc/%u/cwd/", n->pid)
                           : snprintf(where, sizeof where, "/proc/%u/fd/%d/", n->pid, dirfd);
    if (at < 0 || (size_t)at + 8 > sizeof where) return 0;
    struct stat st;
    snprintf(where + at, sizeof where - (size_t)at, "objects");
    if (stat(where, &st) != 0 || !S_ISDIR(st.st_mode)) return 0;
    snprintf(where + at, sizeof where - (size_t)at, "HEAD");
    if (stat(where, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    return planted == 'q' ? 'q' : 'p';
}

/* PATH as a path from the root: itself when absolute, else joined to BASE (open_base). */
static void open_full(const char *path, const char *base, char *full, size_t cap) {
    if (path[0] == '/') snprintf(full, cap, "%s", path);
    else snprintf(full, cap, "%s/%s", base, path);
}

/* Whether resolved path P is an object file of a git store: a loose object (.../xx/<38+ hex>),
 * a pack and its companions, a commit graph or multi-pack index. */
static int object_file(const char *p) {
    size_t n = strlen(p);
    static const char *ends[] = {".pack", ".idx", ".rev", ".bitmap", ".mtimes", "/commit-graph", "/multi-pack-index"};
    for (size_t k = 0; k < sizeof ends / sizeof *ends; k++) {
        size_t e = strlen(ends[k]);
        if (n > e && !strcmp(p + n - e, ends[k])) return 1;
    }
    const char *base = strrchr(p, '/');
    if (!base || base - p < 3 || base[-3] != '/') return 0;
    size_t hex = strspn(base + 1, "0123456789abcdef");
    return hex >= 38 && !base[1 + hex] && strspn(base - 2, "0123456789abcdef") >= 2;
}

/* The machine's git reading git storage as a plain file, or through a path that does not name
 * it: git opens its object database's files (loose objects, packs, their indexes, the commit
 * graph) O_CLOEXEC (git_open); a file it reads as a file -- diff --no-index (also implied
 * outside a repository or for a path outside it), grep --no-index, merge-file, blame --contents,
 * apply, config --file -- it opens without. So an open without O_CLOEXEC that reaches an object
 * file is an open row (a finding: its bytes, printed as a binary patch, are the object), however
 * its path is spelled ("objects/da/<hex>" from inside .git, a link to .git). And an open whose
 * path git_layout does not know, and which does not name git storage as written, that reaches
 * git storage through a link of the phase's (d -> .git/objects/xx) is one too. Each such open
 * is walked in git's root (a walk that cannot follow a link: a finding). */
static void git_disguised_read(const struct notif *n, const char *path, const char *base, int layout,
                               uint64_t flags, const struct git_pin *pinned) {
    int plain = !(flags & (O_CLOEXEC | O_DIRECTORY)) || n->nr == NR_OPENAT2;
    char full[8300], proc[64], resolved[4096];
    open_full(path, base, full, sizeof full);
    /* a path relative to a removed folder (its cwd, or a descriptor's, read as "... (deleted)"):
     * the tracer's walk from "/" finds nothing there, while the kernel's goes up from the removed
     * folder ("../d/<hex>"). git cannot start in a removed folder; one removed under it while it
     * runs is the phase's doing: a finding, never a missing name */
    size_t bl = strlen(base);
    int removed = bl > 10 && !strcmp(base + bl - 10, " (deleted)");
    if (!removed && layout && !plain) return;  /* the object database's own opens: git's rows judge them */
    if (!removed && !plain && git_storage(full)) return;  /* named as what it is: judged by git's own rows */
    /* an open the tracer answered from its own walk (pinned): that walk is what is judged, none
     * other (a walk of its own here could reach another file than the one git was handed) */
    if (!removed && pinned && pinned->fd < 0) return;  /* answered with an error: git got nothing */
    int fd = removed || pinned ? -1 : resolve_at(n->pid, full);
    ssize_t m = 0;
    int magic = removed;
    if (removed) {
        m = snprintf(resolved, sizeof resolved, "(relative to a removed folder)");
    } else if (pinned) {
        m = snprintf(resolved, sizeof resolved, "%s", pinned->resolved);
        if (m <= 0 || (size_t)m >= sizeof resolved) return;
    } else if (fd >= 0) {
        char self[64];
        snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
        m = readlink(self, resolved, sizeof resolved - 1);
        close(fd);
        if (m <= 0) return;
        resolved[m] = 0;
    } else {  /* through a link into /proc or /dev (the caller's own cwd or root, a descriptor):
               * walked as a program's open is; one that cannot be followed is a finding too */
        struct walk w = {.fd = -1};
        m = (ssize_t)resolve(n->pid, full, resolved, sizeof resolved, &magic, &w);
        if (w.fd >= 0) close(w.fd);
        if (!m && !magic) return;
        if (!m) snprintf(resolved, sizeof resolved, "(not followed)");
        m = (ssize_t)strlen(resolved);
    }
    int reached = plain ? object_file(resolved) || (!layout && git_storage(resolved)) : git_storage(resolved);
    if ((!magic && !reached) || ++open_rows > OPEN_ROWS_LIMIT) return;
    struct buf own = {0}, *row = &own;  /* a row of its own (one row a buffer: emit) */
    put(row, "", 0);
    char head[96];
    snprintf(head, sizeof head, "{\"kind\": \"open\", \"pid\": %u, \"path\": ", n->pid);
    puts_(row, head);
    put_json_string(row, full, strlen(full));
    puts_(row, ", \"resolved\": ");
    put_json_string(row, resolved, (size_t)m);
    puts_(row, removed ? ", \"unpinned\": \"the machine's git opened a path relative to a removed folder (its walk cannot be followed)\""
               : plain && object_file(resolved)
                   ? ", \"unpinned\": \"the machine's git read an object file as a plain file (not from its object database)\""
                   : ", \"unpinned\": \"the machine's git read git storage through a path that does not name it\"");
    snprintf(proc, sizeof proc, "/proc/%u/exe", n->pid);
    char exe[4096];
    ssize_t e = readlink(proc, exe, sizeof exe - 1);
    puts_(row, ", \"exe\": ");
    if (e >= 0) put_json_string(row, exe, (size_t)e); else puts_(row, "null");
    puts_(row, "}\n");
    emit(row);
    free(own.data);
}

/* An open row of the machine's git's, a finding: PATH as git named it, RESOLVED what a walk
 * reached (NULL: none), WHY the reason (a row of its own: one row a buffer, emit). */
static void git_open_finding(const struct notif *n, const char *path, const char *resolved, const char *why) {
    if (++open_rows > OPEN_ROWS_LIMIT) return;
    struct buf own = {0};
    put(&own, "", 0);
    char head[96], proc[64], exe[4096];
    snprintf(head, sizeof head, "{\"kind\": \"open\", \"pid\": %u, \"path\": ", n->pid);
    puts_(&own, head);
    put_json_string(&own, path, strlen(path));
    if (resolved && *resolved) { puts_(&own, ", \"resolved\": "); put_json_string(&own, resolved, strlen(resolved)); }
    puts_(&own, ", \"unpinned\": ");
    put_json_string(&own, why, strlen(why));
    snprintf(proc, sizeof proc, "/proc/%u/exe", n->pid);
    ssize_t e = readlink(proc, exe, sizeof exe - 1);
    puts_(&own, ", \"exe\": ");
    if (e >= 0) put_json_string(&own, exe, (size_t)e); else puts_(&own, "null");
    puts_(&own, "}\n");
    emit(&own);
    free(own.data);
}

static void gitread_row(const struct notif *n, struct buf *row, uint32_t tgid, const struct git_pin *pinned,
                        const char *walked_path, size_t known_len, const char *known_base) {
    if (gitread_rows > GITREAD_ROWS_LIMIT) return;
    char path[4096];
    uint64_t at = n->nr == NR_OPEN ? n->args[0] : n->args[1];
    size_t len;
    if (walked_path && known_len < sizeof path) {  /* the path (and folder) open_row read and walked: not read again */
        memcpy(path, walked_path, known_len);
        path[known_len] = 0;
        len = known_len;
    } else {
        known_base = NULL;
        len = remote_string(n->pid, at, path, sizeof path);
    }
    size_t dir_len = 0;
    int what = len ? git_layout_of(n, path, len, &dir_len, pinned ? pinned->resolved : NULL) : 0;
    uint64_t open_flags = n->nr == NR_OPEN ? n->args[1] : n->nr == NR_OPENAT ? n->args[2] : 0;
    /* a planted name's row is a HEAD-like file's; a folder under objects/ is a store's ('o') */
    if (what == 'q') what = (open_flags & O_DIRECTORY) ? 'o' : 'p';
    if (what == 'p') what = 'h';
    char base[4096] = "";
    if (len && (what || !(open_flags & O_DIRECTORY))) {  /* once, for both */
        if (known_base && path[0] != '/') snprintf(base, sizeof base, "%s", known_base);
        else open_base(n, path, base, sizeof base);
    }
    if (len && !(open_flags & O_DIRECTORY)) git_disguised_read(n, path, base, what != 0, open_flags, pinned);
    if (!what) return;
    /* a folder of references is listed, not read (what its files name is read by their opens;
     * openat2's flags are behind a pointer: its opens are all taken) */
    uint64_t flags = n->nr == NR_OPEN ? n->args[1] : n->nr == NR_OPENAT ? n->args[2] : 0;
    if (what != 'o' && (flags & O_DIRECTORY)) return;
    (void)dir_len;
    char leaf[4096] = "";  /* an object file's own name in that folder */
    if (what == 'o' && !(flags & O_DIRECTORY)) { /* the folder that holds what is read: a store's
        * own folder, its pack or info folder, a loose object's folder (each may be a link) */
        char *slash = strrchr(path, '/');
        snprintf(leaf, sizeof leaf, "%s", slash ? slash + 1 : path);
        if (slash == path) path[1] = 0;
        else if (slash) *slash = 0;
        else snprintf(path, sizeof path, ".");
    }
    char full[8300];
    open_full(path, base, full, sizeof full);
    /* every open is walked (a link swapped between two opens of one path is seen); a row is
     * written once per process for each file or folder reached (and each text of a HEAD). An open
     * the tracer answered from its own walk (pinned) is judged by that walk, the file git was
     * handed; an object file's folder is walked here (a second walk, see docs/threat-model.md) */
    int by_pin = pinned && !(what == 'o' && !(flags & O_DIRECTORY));
    int fd = by_pin ? (pinned->fd >= 0 ? fcntl(pinned->fd, F_DUPFD_CLOEXEC, 0) : -1) : resolve_at(n->pid, full);
    if (fd < 0 && !by_pin) {  /* a descriptor link, or a link of the phase's own into /proc or /dev (resolve) */
        struct walk w = {.fd = -1};
        int magic = 0;
        char through[4096];
        resolve(n->pid, full, through, sizeof through, &magic, &w);
        fd = w.fd;
    }
    struct stat st;
    int known = fd >= 0 && fstat(fd, &st) == 0;
    if (pinned && !by_pin && pinned->fd >= 0) {
        /* the folder this walk reached holds the very file git was handed (the pin's walk), or the
         * row would name another store than the one read (a link swapped between the two walks) */
        struct stat in, handed;
        int same = known && leaf[0] && fstatat(fd, leaf, &in, AT_SYMLINK_NOFOLLOW) == 0 &&
                   fstat(pinned->fd, &handed) == 0 && in.st_dev == handed.st_dev && in.st_ino == handed.st_ino;
        if (!same)
            git_open_finding(n, full, pinned->resolved,
                             "the machine's git read an object file that is not in the folder its gitread row names");
    }
    /* an object file's own identity (the file git was handed when pinned): the store is told by
     * its files too, not only by the folder the path names -- a hard link of the task's objects
     * into a folder of the phase's own (same mount, link() unreported) is still the task's file */
    struct stat obj;
    int obj_known = 0;
    if (what == 'o' && leaf[0] && !(flags & O_DIRECTORY)) {
        if (pinned && pinned->fd >= 0) obj_known = fstat(pinned->fd, &obj) == 0;
        else if (known) obj_known = fstatat(fd, leaf, &obj, AT_SYMLINK_NOFOLLOW) == 0;
        if (obj_known && !S_ISREG(obj.st_mode)) obj_known = 0;
    }
    char link[64], peeked[128];
    const char *text = peeked;
    ssize_t got = -1;
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    if (by_pin && pinned->content_len >= 0 && (what == 'h' || what == 'c')) {
        /* pinned: the whole file, as git was handed it (a sealed copy, git_seal) */
        text = pinned->content;
        got = pinned->content_len;
    } else if (known && (what == 'h' || what == 'c') && S_ISREG(st.st_mode)) {
        /* not pinned (EVOTREE_TRACE_PIN=off, git's opens to write): its first bytes, a peek
         * before git reads them (a file rewritten in between shows git other bytes) */
        int rd = open(link, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
        got = rd >= 0 ? read(rd, peeked, sizeof peeked) : -1;
        if (rd >= 0) close(rd);
    }
    if (!tgid) tgid = tgid_of(n->pid);
    uint64_t key = known ? ((uint64_t)st.st_dev * 1000003u) ^ (uint64_t)st.st_ino : fnv(full, strlen(full));
    key = key * 31 + (uint64_t)what + (got > 0 ? fnv(text, (size_t)got) : 0);
    if (obj_known) key = key * 1000003u + (((uint64_t)obj.st_dev * 1000003u) ^ (uint64_t)obj.st_ino);
    if (gitread_once(tgid, key)) { if (fd >= 0) close(fd); return; }
    char head[160];
    if (++gitread_rows > GITREAD_ROWS_LIMIT) {
        snprintf(head, sizeof head, "{\"kind\": \"gitread\", \"pid\": %u, \"overflow\": true}\n", tgid);
        puts_(row, head);
        if (fd >= 0) close(fd);
        return;
    }
    snprintf(head, sizeof head, "{\"kind\": \"gitread\", \"pid\": %u, \"what\": \"%s\", \"path\": ", tgid,
             what == 'h' ? "head" : what == 'r' ? "ref" : what == 'c' ? "pointer" : "objects");
    puts_(row, head);
    put_json_string(row, full, strlen(full));
    if (known) {
        snprintf(head, sizeof head, ", \"dev\": %llu, \"ino\": %llu, \"type\": \"%s\"", (unsigned long long)st.st_dev,
                 (unsigned long long)st.st_ino, S_ISREG(st.st_mode) ? "file" : S_ISDIR(st.st_mode) ? "dir" : "other");
        puts_(row, head);
        char resolved[4096];
        ssize_t r = readlink(link, resolved, sizeof resolved - 1);
        if (r > 0) { puts_(row, ", \"resolved\": "); put_json_string(row, resolved, (size_t)r); }
        if (got >= 0) { puts_(row, ", \"content\": "); put_json_string(row, text, (size_t)got); }
    } else {
        puts_(row, ", \"unresolved\": true");
    }
    if (obj_known) {
        snprintf(head, sizeof head, ", \"file_dev\": %llu, \"file_ino\": %llu", (unsigned long long)obj.st_dev,
                 (unsigned long long)obj.st_ino);
        puts_(row, head);
    }
    if (fd >= 0) close(fd);
    puts_(row, "}\n");
}

/* A HEAD or pointer file ('h', 'c': git_layout) the machine's git opens to read, handed as a
 * sealed copy (issue 29, red team (A)): the tracer reads the WHOLE file once from the descriptor
 * pin() opened, puts exactly those bytes into a memfd sealed against every change (F_SEAL_WRITE,
 * _GROW, _SHRINK, _SEAL) and hands git a read-only open of that instead (REP->fd replaced; the
 * same ADDFD answer). PINNED->content is those bytes: what the audit judges is what git reads,
 * whatever the phase writes to the file afterwards (a linked worktree's HEAD is writable). Only
 * regular files (a folder, device or FIFO is handed as pinned; its row has no content). A file
 * over GIT_SEALED_LIMIT (64 KiB: a HEAD is a line, FETCH_HEAD a line a fetched ref, a graft file a
 * line a commit), or one that cannot be read or copied, fails closed: git gets EIO and the reason
 * is returned (a finding); NULL otherwise -- but for a longer HEAD-named file whose text nothing
 * judges (a reflog, logs/HEAD: not in a worktree's folder, git_worktree_file), handed as pinned.
 * git reads these files by open + read to EOF (lstat of the path before, no fstat, no mmap:
 * strace of git 2.39; a reflog it fstat()s: a memfd's size is the file's), so a memfd serves it
 * as the file would. */
#define GIT_SEALED_LIMIT 65536
static char git_sealed[GIT_SEALED_LIMIT + 1];  /* the serving thread's one buffer */
static char git_chunk[GIT_SEALED_LIMIT];        /* and its copy buffer for a planted name's file */
/* the bytes of a planted name's file (git_planted) its row holds */
#define GIT_PLANTED_TEXT 4096

/* Whether the file a walk RESOLVED (the canonical path) is one whose text the audit can take for
 * a worktree's HEAD (trace.py _worktree_head: a file of <git dir>/worktrees/<name>/): its
 * folder's folder is named "worktrees". An unresolved path counts as one (fails closed). */
static int git_worktree_file(const char *resolved) {
    const char *end = strrchr(resolved, '/');
    if (!end) return 1;
    const char *parent = end;
    while (parent > resolved && parent[-1] != '/') parent--;
    if (parent == resolved) return 0;
    const char *grand_end = parent - 1, *grand = grand_end;
    while (grand > resolved && grand[-1] != '/') grand--;
    return grand_end - grand == 9 && !strncmp(grand, "worktrees", 9);
}

static const char *git_seal(const struct notif *n, const char *path, size_t len, uint64_t flags, struct reply *rep,
                            struct git_pin *pinned) {
    size_t dir_len = 0;
    int what = git_layout_of(n, path, len, &dir_len, pinned->resolved);
    if (what == 'q') what = 'p';  /* under objects/: a folder is not sealed (not a regular file) */
    if (what != 'h' && what != 'c' && what != 'p') return NULL;
    int more = 0;  /* a planted name's file over GIT_SEALED_LIMIT: copied whole, chunk by chunk */
    struct stat st;
    const char *why = NULL;
    if (fstat(rep->fd, &st) != 0) why = "a HEAD or pointer file of the machine's git that cannot be read (not handed)";
    else if (!S_ISREG(st.st_mode)) return NULL;
    size_t got = 0;
    while (!why) {
        ssize_t r = pread(rep->fd, git_sealed + got, sizeof git_sealed - got, (off_t)got);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) why = "a HEAD or pointer file of the machine's git that cannot be read (not handed)";
        else if (r == 0) break;
        else if ((got += (size_t)r) > GIT_SEALED_LIMIT && what == 'p') {
            more = 1;
            break;
        } else if (got > GIT_SEALED_LIMIT) {
            /* a reflog (logs/HEAD: appended to, fstat'd, read backwards) or another HEAD-named file
             * outside a worktree's folder: its text is judged nowhere, so it is handed as pinned */
            const char *leaf = strrchr(path, '/');
            leaf = leaf ? leaf + 1 : path;
            if (what == 'h' && !strcmp(leaf, "HEAD") && *pinned->resolved && !git_worktree_file(pinned->resolved))
                return NULL;  /* a state pointer (ORIG_HEAD, FETCH_HEAD ...) is judged by its text anywhere */
            why = "a HEAD or pointer file of the machine's git over 65536 bytes (not handed: only a sealed copy is)";
        }
    }
    int sealed = -1;
    if (!why) {
        const char *base = strrchr(path, '/');
        int mfd = memfd_create(base ? base + 1 : path, MFD_CLOEXEC | MFD_ALLOW_SEALING);
        size_t put_n = 0;
        while (mfd >= 0 && put_n < got) {
            ssize_t r = write(mfd, git_sealed + put_n, got - put_n);
            if (r < 0 && errno == EINTR) continue;
            if (r <= 0) break;
            put_n += (size_t)r;
        }
        /* the rest of a planted name's file (an index, a rerere preimage): copied as read */
        off_t at = (off_t)got;
        while (more && mfd >= 0 && put_n == got) {
            ssize_t r = pread(rep->fd, git_chunk, sizeof git_chunk, at);
            if (r < 0 && errno == EINTR) continue;
            if (r < 0) { put_n = 0; break; }
            if (r == 0) break;
            ssize_t w = 0;
            while (w < r) {
                ssize_t k = write(mfd, git_chunk + w, (size_t)(r - w));
                if (k < 0 && errno == EINTR) continue;
                if (k <= 0) break;
                w += k;
            }
            if (w != r) { put_n = 0; break; }
            at += r;
        }
        char self[64];
        snprintf(self, sizeof self, "/proc/self/fd/%d", mfd);
        /* git's open is to read: it is handed a read-only open of the sealed copy */
        if (mfd >= 0 && put_n == got &&
            fcntl(mfd, F_ADD_SEALS, F_SEAL_WRITE | F_SEAL_GROW | F_SEAL_SHRINK | F_SEAL_SEAL) == 0)
            sealed = open(self, O_RDONLY | O_CLOEXEC | ((int)flags & O_NONBLOCK));
        if (mfd >= 0) close(mfd);
        if (sealed < 0) why = "a HEAD or pointer file of the machine's git that could not be copied sealed (not handed)";
    }
    close(rep->fd);
    rep->fd = sealed;
    if (why) { rep->error = EIO; return why; }
    pinned->content = git_sealed;
    /* a planted name's text: its start, all git parses of a reference (an id or "ref: NAME") */
    pinned->content_len = (ssize_t)(what == 'p' && got > GIT_PLANTED_TEXT ? GIT_PLANTED_TEXT : got);
    return NULL;
}

static void open_row(const struct notif *n, struct buf *row, struct reply *rep) {
#ifdef EVOTREE_TRACE_FLOOR
    /* benchmarks only (bench_audit_trace.py --floor builds it): every open is let go on at once,
     * nothing read or written -- the cost of the trap itself, the floor under any tracer's work.
     * The build of the package never defines it. */
    (void)n; (void)row; (void)rep;
    return;
#endif
    if (open_rows > OPEN_ROWS_LIMIT) return;
    /* the cheapest check first: most opens of a phase are git's (not exempt: a git with code loaded
     * into it, is_tainted; its threads count as the process) */
    uint32_t tgid = 0;
    int git = 0;  /* the machine's git reading: pinned below as a program's open is, its rows gitread rows */
    if (runs_system_git(n->pid, &tgid) && !(tainted_count && is_tainted(tgid ? tgid : tgid_of(n->pid))) &&
        !(ptrace_seen && traced_now(tgid ? tgid : tgid_of(n->pid)))) {
        /* only its opens to read (O_RDONLY, no O_CREAT, O_TRUNC, O_PATH; open and openat: git
         * calls no openat2) are pinned; the rest go on (CONTINUE) as before, walked by its rows */
        uint64_t f = n->nr == NR_OPEN ? n->args[1] : n->args[2];
        if (!rep || pin_off || n->nr == NR_OPENAT2 || (f & O_ACCMODE) != O_RDONLY ||
            (f & (O_CREAT | O_TRUNC | O_PATH))) {
            gitread_row(n, row, tgid, NULL, NULL, 0, NULL);
            return;
        }
        git = 1;
    }
    char path[4096], base[4096], proc[64], full[8300], resolved[4096];
    int dirfd = n->nr == NR_OPEN ? -100 : (int)n->args[0];
    uint64_t at = n->nr == NR_OPEN ? n->args[0] : n->args[1];
    int cut = 0;
    size_t len = remote_string_cut(n->pid, at, path, sizeof path, &cut);
    /* a path (or openat2's open_how) the tracer cannot read whole: what the kernel would open is
     * not known, so neither is the call let go on (CONTINUE would open it unseen) -- EFAULT, what
     * the kernel answers for memory it cannot read either -- nor is it without a row (a finding) */
    uint64_t how_probe[3];
    if (!cut && n->nr == NR_OPENAT2 && n->args[2] && n->args[3] >= sizeof how_probe) {
        struct iovec local = {how_probe, sizeof how_probe}, remote = {(void *)(uintptr_t)n->args[2], sizeof how_probe};
        cut = process_vm_readv((pid_t)n->pid, &local, 1, &remote, 1, 0) != (ssize_t)sizeof how_probe;
    }
    if (cut && at) {
        if (rep) rep->error = EFAULT;
        if (++open_rows > OPEN_ROWS_LIMIT) return;
        char head[96];
        snprintf(head, sizeof head, "{\"kind\": \"open\", \"pid\": %u, \"path\": ", n->pid);
        puts_(row, head);
        put_json_string(row, path, len);
        puts_(row, ", \"unresolved\": true, \"unreadable\": true}\n");
        return;
    }
    /* an empty path: ENOENT, the kernel's answer (let go on, the kernel would read it again) */
    if (!len) { if (rep && at) rep->error = ENOENT; return; }
    /* the caller's flags (openat2's and its RESOLVE_* flags are behind a pointer); openat2
     * resolving beneath or in its directory descriptor (RESOLVE_BENEATH 0x08, RESOLVE_IN_ROOT
     * 0x10) takes even an absolute path inside that folder */
    uint64_t flags = n->nr == NR_OPEN ? n->args[1] : n->args[2], how[3] = {0, 0, 0};
    int scoped = 0, known_flags = 1;
    if (n->nr == NR_OPENAT2) {
        struct iovec local = {how, sizeof how}, remote = {(void *)(uintptr_t)n->args[2], sizeof how};
        known_flags = n->args[2] && n->args[3] >= sizeof how &&
                      process_vm_readv((pid_t)n->pid, &local, 1, &remote, 1, 0) == (ssize_t)sizeof how;
        flags = known_flags ? how[0] : 0;
        /* walked from the caller's own directory descriptor (or cwd): RESOLVE_BENEATH and
         * _IN_ROOT keep the walk in it, and a relative walk with RESOLVE_NO_XDEV crosses no
         * mount above it */
        scoped = known_flags && (how[2] & 0x18 ? dirfd != -100 : (how[2] & 0x01) && path[0] != '/');
    }
    /* the kernel's checks of the arguments, before any walk: its answer */
    if (rep && known_flags) {
        int tail_nonzero = 0;
        if (n->nr == NR_OPENAT2 && n->args[3] > sizeof how && n->args[3] <= 4096) {
            unsigned char tail[4096];
            size_t more = (size_t)n->args[3] - sizeof how;
            struct iovec local = {tail, more}, remote = {(void *)(uintptr_t)(n->args[2] + sizeof how), more};
            if (process_vm_readv((pid_t)n->pid, &local, 1, &remote, 1, 0) != (ssize_t)more) { rep->error = EFAULT; return; }
            for (size_t k = 0; k < more && !tail_nonzero; k++) tail_nonzero = tail[k] != 0;
        }
        int refused = open_arguments_refused(n->nr, flags, how, n->nr == NR_OPENAT2 ? n->args[3] : 24, tail_nonzero);
        if (refused) { rep->error = refused; return; }
    }
    /* opens that can read, of a file that exists: pinned (pin()) */
    int pinnable = rep && !pin_off && known_flags && (flags & O_ACCMODE) != O_WRONLY && !(flags & O_PATH) &&
                   (flags & (O_CREAT | O_EXCL)) != (O_CREAT | O_EXCL) && (flags & __O_TMPFILE) != __O_TMPFILE;
    /* openat2's open_how is in the caller's memory too: read again by the kernel after CONTINUE,
     * its flags can be rewritten to a read. So no openat2 is let go on unseen: one that cannot
     * read (O_PATH, O_WRONLY, O_CREAT|O_EXCL, O_TMPFILE) is a finding. (An O_PATH descriptor
     * cannot be handed over: SECCOMP_IOCTL_NOTIF_ADDFD refuses O_PATH files.) */
    int how_in_memory = n->nr == NR_OPENAT2 && rep && !pin_off && known_flags;
    /* a read-open is never let go on unseen (pin_some, the benchmarks' partial pinning, aside):
     * pinned, answered with an error, or a finding */
    int must_answer = (pinnable || how_in_memory) && !pin_some;
    const char *let_go = NULL;  /* why an open no walk answers is let go on (a finding) */
    if (how_in_memory && !pinnable) let_go = "an openat2 that cannot read, whose open_how could change after the tracer read it";
    size_t plen = strlen(path);
    struct walk w = {.fd = -1, .nofollow = (flags & O_NOFOLLOW) != 0, .directory = (flags & O_DIRECTORY) != 0,
                     .must_dir = plen && (path[plen - 1] == '/' || (plen >= 2 && !strcmp(path + plen - 2, "/."))),
                     .resolve_flags = n->nr == NR_OPENAT2 ? how[2] & 0x07 : 0};
    int base_lost = 0;  /* the folder a relative path starts from could not be read */
    if (path[0] == '/' && !scoped) {
        snprintf(full, sizeof full, "%s", path);
    } else {
        if (dirfd == -100) snprintf(proc, sizeof proc, "/proc/%u/cwd", n->pid);
        else snprintf(proc, sizeof proc, "/proc/%u/fd/%d", n->pid, dirfd);
        ssize_t b = readlink(proc, base, sizeof base - 1);
        /* a descriptor the caller does not hold: the kernel answers EBADF (nothing is walked) */
        if (b < 0 && errno == ENOENT && dirfd != -100 && pinnable) { rep->error = EBADF; return; }
        /* a folder deeper than a page (ENAMETOOLONG) or a path cut at the buffer's end */
        if (b < 0 ? errno == ENAMETOOLONG : (size_t)b >= sizeof base - 1) base_lost = 1;
        if (b < 0) b = 0;
        base[b] = 0;
        /* a descriptor that is no folder (a pipe, a socket, a file): the kernel's ENOTDIR */
        /* the folder's stat, where an answer below reads it (a descriptor that may be no folder,
         * a folder read as removed): not for a plain cwd-relative open (a stat saved per open) */
        int deleted_name = b > 10 && !strcmp(base + b - 10, " (deleted)");
        struct stat at_st;
        int at_known = b > 0 && ((dirfd != -100 && path[0] != '/' && must_answer) || deleted_name) &&
                       stat(proc, &at_st) == 0;
        if (at_known && !S_ISDIR(at_st.st_mode) && dirfd != -100 && path[0] != '/' && must_answer) {
            rep->error = ENOTDIR;
            return;
        }
        /* a removed folder (no link left to it; a live one may be named "... (deleted)"): its
         * path names another (or none). No name can be found in it (ENOENT, the kernel's
         * answer); "." and ".." are a finding (not walked) */
        if (deleted_name && (!at_known || at_st.st_nlink == 0)) {
            pinnable = 0;
            const char *first = path;
            while (*first == '/' || (first[0] == '.' && (first[1] == '/' || !first[1]))) first++;
            if (*first && !(first[0] == '.' && first[1] == '.' && (!first[2] || first[2] == '/'))) {
                if (must_answer) { rep->error = ENOENT; return; }
            } else {
                let_go = "a relative open from a removed folder";
            }
        }
        snprintf(full, sizeof full, "%s/%s", base, path);
    }
    int magic = base_lost;
    size_t walked = 0;
    char norm[8300];
    if (!magic) {  /* another process's memory (the machine's git, whose opens are exempt) */
        squeeze(full, norm, sizeof norm);
        magic = proc_mem_path(norm);
    }
    int storage = !git && !magic && git_storage(full);  /* git's own storage opens: walked and pinned */
    if (!magic && !storage && scoped) {
        /* walked from the caller's directory descriptor itself, with the caller's RESOLVE_*
         * flags: the kernel keeps this walk inside that folder as it keeps the caller's */
        int dfd = open(proc, O_PATH | O_CLOEXEC);
        struct { uint64_t flags, mode, resolve; } scope = {O_PATH | O_CLOEXEC | (w.nofollow ? O_NOFOLLOW : 0), 0,
                                                          how[2] & 0x1f};
        int fd = dfd >= 0 ? openat2_(dfd, path, &scope, sizeof scope) : -1;
        if (fd < 0 && dfd >= 0) {  /* the kernel's walk from the same folder, with its flags */
            int e = errno;
            /* in /proc, whose self, thread-self, net and mounts name no process for the tracer:
             * a finding (not the kernel's answer) */
            if (strstr(path, "self") || strstr(full, "/proc/") || !strncmp(full, "/proc", 5))
                w.why = "a scoped openat2 in /proc";
            else if (e == ENOENT) w.missing = 1;
            else w.error = e;
        }
        if (dfd >= 0) close(dfd);
        if (fd >= 0) {
            char self[64];
            snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
            ssize_t m = readlink(self, resolved, sizeof resolved - 1);
            if (m > 0) { resolved[m] = 0; walked = (size_t)m; w.fd = fd; } else close(fd);
        }
        if (!walked) walked = resolve(n->pid, full, resolved, sizeof resolved, &magic, NULL);
    } else if (!magic && !storage) {  /* the path as written is not git storage: the file it names may be */
        walked = resolve(n->pid, full, resolved, sizeof resolved, &magic, pinnable ? &w : NULL);
    }
    /* a walk refused on the way (EACCES: a folder above the caller's cwd, which the kernel's
     * relative walk never checks) or too long once joined to the cwd (ENAMETOOLONG) where the
     * kernel's may not be: not let go on unseen, a finding (fails closed) */
    if (!magic && !storage && !walked && w.fd < 0 && (w.error == EACCES || w.error == ENAMETOOLONG) &&
        strncmp(norm, "/proc/", 6) && !(git && path[0] == '/' && !scoped && w.error == EACCES))
        magic = 1;  /* (an absolute path of git's refused on the way: the kernel's walk is the same, EACCES) */
    if (pinnable && !magic && !storage && (flags & O_CREAT) && w.fd < 0 && w.missing) {
        uint64_t mode = n->nr == NR_OPEN ? n->args[2] : n->nr == NR_OPENAT ? n->args[3] : how[1];
        /* a name made through the caller's own cwd or root link: made where the link stands */
        char standing[8300];
        int own = scoped ? 0 : own_link(n->pid, norm, standing, sizeof standing);
        int made = scoped || own < 0 || own == 2 ? -1
                                                 : create_pinned(n->pid, own ? standing : full, flags, mode, rep);
        if (made == 0) {  /* made since the walk: what is there is walked, judged and pinned */
            w.missing = 0;
            walked = resolve(n->pid, full, resolved, sizeof resolved, &magic, &w);
        } else {
            pinnable = 0;
            if (made < 0) w.why = "a file made where the tracer cannot make it for the caller";
        }
    }
    int judged = magic || storage || (walked && git_storage(resolved));
    if (git && !walked && w.fd >= 0) w.fd = (close(w.fd), -1);  /* a walk not known as a path: not pinned */
    w.crossed = walked && !w.descriptor && strcmp(resolved, norm) != 0;
    w.path = walked ? resolved : NULL;
    if (must_answer && (proc_namespaced(norm) || (walked && proc_namespaced(resolved)))) {
        w.why = "a /proc file of the opener's namespaces (the tracer's are the host's)";
        pinnable = 0;
    }
    /* the answer: pin_some pins only what its walk could not take as written (and every HEAD or
     * pointer file of git's: its text is judged, so git reads a sealed copy, git_seal) */
    size_t git_dir_len = 0;
    int git_what = git ? git_layout_of(n, path, len, &git_dir_len, walked ? resolved : NULL) : 0;
    int git_text = git_what == 'h' || git_what == 'c' || git_what == 'p' || git_what == 'q';
    if (pinnable && !magic && !storage &&
        (!pin_some || judged || git_text || w.descriptor || w.fd < 0 || !walked || w.crossed))
        pin(n->pid, &w, flags, rep);
    if (git) {  /* its rows judge the walk git was handed (or answered from), none other */
        struct git_pin pinned = {-1, walked ? resolved : "", NULL, -1};
        const char *unsealed = rep->fd >= 0 ? git_seal(n, path, len, flags, rep, &pinned) : NULL;
        if (unsealed) git_open_finding(n, full, walked ? resolved : NULL, unsealed);
        pinned.fd = rep->fd >= 0 ? w.fd : -1;
        int answered = rep->fd >= 0 || rep->error;
        /* the path this walk took, and the folder it started from (read once per open) */
        gitread_row(n, row, tgid, answered ? &pinned : NULL, path, len, path[0] == '/' ? NULL : base);
        if (w.fd >= 0) close(w.fd);
        /* a read-open of git's that no walk answered (it goes on, CONTINUE): a finding, as a
         * program's is -- else the kernel's second walk could reach what the tracer's did not */
        if (!must_answer || answered) return;
        if (!w.why) w.why = magic ? "its walk could not be followed" : let_go ? let_go : "let go on";
        git_open_finding(n, full, walked ? resolved : NULL, w.why);
        return;
    }
    if (w.fd >= 0) close(w.fd);
    if (must_answer && !judged && rep->fd < 0 && !rep->error && !w.why)
        w.why = let_go ? let_go : "let go on";  /* nothing above answered it */
    if (must_answer && rep->fd < 0 && !rep->error && w.why) judged = magic = 1;
    if (!judged) return;
    snprintf(proc, sizeof proc, "/proc/%u/exe", n->pid);
    char exe[4096];
    ssize_t e = readlink(proc, exe, sizeof exe - 1);
    char head[64];
    if (++open_rows > OPEN_ROWS_LIMIT) {
        snprintf(head, sizeof head, "{\"kind\": \"open\", \"pid\": %u, \"overflow\": true}\n", n->pid);
        puts_(row, head);
        return;
    }
    snprintf(head, sizeof head, "{\"kind\": \"open\", \"pid\": %u, \"path\": ", n->pid);
    puts_(row, head);
    put_json_string(row, full, strlen(full));
    if (walked) { puts_(row, ", \"resolved\": "); put_json_string(row, resolved, walked); }
    if (magic) puts_(row, ", \"unresolved\": true");
    if (w.why && rep->fd < 0 && !rep->error) { puts_(row, ", \"unpinned\": "); put_json_string(row, w.why, strlen(w.why)); }
    if (rep->fd >= 0) puts_(row, ", \"pinned\": true");
    puts_(row, ", \"exe\": ");
    if (e >= 0) put_json_string(row, exe, (size_t)e); else puts_(row, "null");
    puts_(row, "}\n");
}

/* Whether RESOLVED (a path the tracer walked) is under a ".git" folder or of git's storage: the
 * names a "gitwrite" row is written for (the audit keeps those under a task git directory). */
static int git_dir_path(const char *p) {
    size_t n = strlen(p);
    return strstr(p, "/.git/") || (n >= 5 && !strcmp(p + n - 5, "/.git")) || git_storage(p);
}

/* One name a write call makes or changes (issue 29, red team of a6240c4/8fc3cad: A, D, I, O): the
 * name at ADDR from DIRFD (-100: the cwd) as CALL did it, its folder walked as the kernel walks it
 * and its last name appended (not followed: a rename, link, symlink or mknod replaces a link
 * there; FOLLOW: an open without O_NOFOLLOW, whose walk also follows a link there). A gitwrite row
 * when either lands under a ".git" folder. */
static void write_name(const struct notif *n, const char *call, int dirfd, uint64_t addr,
                       int follow, uint64_t link_addr, const char *from_type) {
    char path[4096], base[4096], proc[64], full[8300], parent[8300], resolved[4096], target[8300], followed[4096];
    int cut = 0;
    size_t len = remote_string_cut(n->pid, addr, path, sizeof path, &cut);
    if (!len && !cut) return;
    base[0] = 0;
    if (path[0] != '/') {
        if (dirfd == -100) snprintf(proc, sizeof proc, "/proc/%u/cwd", n->pid);
        else snprintf(proc, sizeof proc, "/proc/%u/fd/%d", n->pid, dirfd);
        ssize_t b = readlink(proc, base, sizeof base - 1);
        base[b < 0 ? 0 : b] = 0;
    }
    open_full(path, base, full, sizeof full);
    /* the folder and the last name (trailing slashes dropped: "x/" names x) */
    snprintf(parent, sizeof parent, "%s", full);
    size_t plen = strlen(parent);
    while (plen > 1 && parent[plen - 1] == '/') parent[--plen] = 0;
    char *slash = strrchr(parent, '/');
    const char *leaf = slash ? slash + 1 : parent;
    char name[4096];
    snprintf(name, sizeof name, "%s", leaf);
    if (slash == parent) parent[1] = 0;
    else if (slash) *slash = 0;
    int magic = 0, magic2 = 0;
    size_t walked = cut ? 0 : resolve(n->pid, parent, resolved, sizeof resolved, &magic, NULL);
    target[0] = 0;
    if (walked) snprintf(target, sizeof target, "%s%s%s", resolved, walked > 1 ? "/" : "", name);
    size_t went = follow && !cut ? resolve(n->pid, full, followed, sizeof followed, &magic2, NULL) : 0;
    char squeezed[8300];
    squeeze(full, squeezed, sizeof squeezed);
    int unresolved = !walked;
    if (!(walked && git_dir_path(target)) && !(went && git_dir_path(followed)) &&
        !(unresolved && git_dir_path(squeezed)))
        return;
    char head[128];
    struct buf own = {0};
    put(&own, "", 0);
    struct buf *row = &own;
    snprintf(head, sizeof head, "{\"kind\": \"gitwrite\", \"pid\": %u, \"call\": \"%s\", \"path\": ", n->pid, call);
    puts_(row, head);
    put_json_string(row, full, strlen(full));
    if (walked) { puts_(row, ", \"resolved\": "); put_json_string(row, target, strlen(target)); }
    else puts_(row, ", \"unresolved\": true");
    if (went) { puts_(row, ", \"followed\": "); put_json_string(row, followed, went); }
    if (from_type) { puts_(row, ", \"from_type\": \""); puts_(row, from_type); puts_(row, "\""); }
    if (link_addr) {
        char text[4096];
        size_t t = remote_string(n->pid, link_addr, text, sizeof text);
        puts_(row, ", \"link\": ");
        put_json_string(row, text, t);
    }
    snprintf(proc, sizeof proc, "/proc/%u/exe", n->pid);
    char exe[4096];
    ssize_t e = readlink(proc, exe, sizeof exe - 1);
    puts_(row, ", \"exe\": ");
    if (e >= 0) put_json_string(row, exe, (size_t)e); else puts_(row, "null");
    puts_(row, "}\n");
    emit(row);
    free(own.data);
}

/* What the name at ADDR from DIRFD (-100: the cwd) is for PID, not followed: "file", "dir",
 * "link", "other" or "unknown" -- a rename or link moves a folder or a link as well as a file,
 * and only a regular file's text is judged when git reads it (trace_written.py). */
static const char *source_type(const struct notif *n, int dirfd, uint64_t addr) {
    char path[4096], base[4096], proc[64], full[8300], resolved[4096];
    int cut = 0;
    size_t len = remote_string_cut(n->pid, addr, path, sizeof path, &cut);
    if (!len || cut) return "unknown";
    base[0] = 0;
    if (path[0] != '/') {
        if (dirfd == -100) snprintf(proc, sizeof proc, "/proc/%u/cwd", n->pid);
        else snprintf(proc, sizeof proc, "/proc/%u/fd/%d", n->pid, dirfd);
        ssize_t b = readlink(proc, base, sizeof base - 1);
        base[b < 0 ? 0 : b] = 0;
    }
    open_full(path, base, full, sizeof full);
    size_t plen = strlen(full);
    while (plen > 1 && full[plen - 1] == '/') full[--plen] = 0;
    char *slash = strrchr(full, '/');
    if (!slash || !slash[1]) return "unknown";
    char leaf[4096];
    snprintf(leaf, sizeof leaf, "%s", slash + 1);
    if (slash == full) full[1] = 0; else *slash = 0;
    int magic = 0;
    struct walk w = {.fd = -1, .directory = 1};
    size_t walked = resolve(n->pid, full, resolved, sizeof resolved, &magic, &w);
    if (!walked || w.fd < 0) { if (w.fd >= 0) close(w.fd); return "unknown"; }
    struct stat st;
    int got = fstatat(w.fd, leaf, &st, AT_SYMLINK_NOFOLLOW);
    close(w.fd);
    if (got != 0) return "unknown";
    return S_ISREG(st.st_mode) ? "file" : S_ISDIR(st.st_mode) ? "dir" : S_ISLNK(st.st_mode) ? "link" : "other";
}

/* A call that makes or changes a name -- an open to write, create or truncate; symlink, link,
 * rename, mknod -- by a process that is not the machine's git (a git with code loaded into it,
 * or traced, counts as not): a "gitwrite" row for each name it makes or changes under a ".git"
 * folder (write_name). In a task's git directory only git writes (harness/audit/trace_written.py
 * judges them): a reference by a link (A), an index (D), a file of the store's layout (I), a
 * commit graph (O) written by hand are findings. The call goes on (CONTINUE). */
static void write_row(const struct notif *n) {
    uint32_t tgid = 0;
    /* an open or openat to read (its flags are in the call: no copy, no write row) whoever makes
     * it -- the machine's git or any other -- is none of write_row's: answered before the program
     * is looked up (a pidfd poll saved per open; the same rows) */
    if (n->nr == NR_OPEN || n->nr == NR_OPENAT) {
        uint64_t f = n->nr == NR_OPEN ? n->args[1] : n->args[2];
        if ((f & O_PATH) || ((f & O_ACCMODE) == O_RDONLY && !(f & (O_CREAT | O_TRUNC)))) return;
    }
    if (runs_system_git(n->pid, &tgid) && !(tainted_count && is_tainted(tgid ? tgid : tgid_of(n->pid))) &&
        !(ptrace_seen && traced_now(tgid ? tgid : tgid_of(n->pid))))
        return;
    int nr = n->nr;
    if (nr == NR_OPEN || nr == NR_OPENAT || nr == NR_OPENAT2) {
        uint64_t flags = nr == NR_OPEN ? n->args[1] : n->args[2];
        if (nr == NR_OPENAT2) {
            uint64_t how = 0;
            struct iovec local = {&how, sizeof how}, remote = {(void *)(uintptr_t)n->args[2], sizeof how};
            if (!n->args[2] || process_vm_readv((pid_t)n->pid, &local, 1, &remote, 1, 0) != (ssize_t)sizeof how)
                how = O_WRONLY;  /* not readable: judged as a write */
            flags = how;
        }
        if (flags & O_PATH) return;
        if ((flags & O_ACCMODE) == O_RDONLY && !(flags & (O_CREAT | O_TRUNC))) return;
        int dirfd = nr == NR_OPEN ? -100 : (int)n->args[0];
        write_name(n, "open", dirfd, nr == NR_OPEN ? n->args[0] : n->args[1], !(flags & O_NOFOLLOW), 0, NULL);
    } else if (nr == NR_SYMLINK) {
        write_name(n, "symlink", -100, n->args[1], 0, n->args[0], NULL);
    } else if (nr == NR_SYMLINKAT) {
        write_name(n, "symlink", (int)n->args[1], n->args[2], 0, n->args[0], NULL);
    } else if (nr == NR_LINK) {
        write_name(n, "link", -100, n->args[1], 0, 0, source_type(n, -100, n->args[0]));
    } else if (nr == NR_LINKAT) {
        /* AT_SYMLINK_FOLLOW (0x400) links what a link names; else the link itself */
        const char *type = (n->args[4] & 0x400) ? NULL : source_type(n, (int)n->args[0], n->args[1]);
        write_name(n, "link", (int)n->args[2], n->args[3], 0, 0, type ? type : "followed");
    } else if (nr == NR_RENAME) {
        const char *type = source_type(n, -100, n->args[0]);
        write_name(n, "rename_from", -100, n->args[0], 0, 0, type);
        write_name(n, "rename", -100, n->args[1], 0, 0, type);
    } else if (nr == NR_RENAMEAT || nr == NR_RENAMEAT2) {
        /* RENAME_EXCHANGE (2): each name takes the other's file, whatever it is */
        const char *type = nr == NR_RENAMEAT2 && (n->args[4] & 2) ? "exchange" : source_type(n, (int)n->args[0], n->args[1]);
        write_name(n, "rename_from", (int)n->args[0], n->args[1], 0, 0, type);
        write_name(n, "rename", (int)n->args[2], n->args[3], 0, 0, type);
    } else if (nr == NR_MKNOD) {
        write_name(n, "mknod", -100, n->args[0], 0, 0, NULL);
    } else if (nr == NR_MKNODAT) {
        write_name(n, "mknod", (int)n->args[0], n->args[1], 0, 0, NULL);
    }
}

/* The serving thread walks, opens and makes files for the phase (pinning): with the phase's
 * permissions, not more. evotree often runs as root, and the phase's uid is then 0 too, without
 * capabilities: an open the tracer made with its own capabilities would hand the phase what they
 * allow (/proc/kallsyms with CAP_SYSLOG shows the kernel's addresses; CAP_DAC_OVERRIDE passes
 * over every file's mode). So this thread keeps in its effective set (capset is per thread) only
 * what it reads other processes' /proc entries with: CAP_SYS_PTRACE (a phase's process made
 * non-dumpable) and CAP_CHECKPOINT_RESTORE (/proc/PID/map_files). */
static void drop_capabilities(void) {
    struct { uint32_t version; int pid; } head = {0x20080522 /* _LINUX_CAPABILITY_VERSION_3 */, 0};
    struct { uint32_t effective, permitted, inheritable; } data[2];
    if (syscall(SYS_capget, &head, data) != 0) return;
    data[0].effective &= 1u << 19;       /* CAP_SYS_PTRACE */
    data[1].effective &= 1u << (40 - 32); /* CAP_CHECKPOINT_RESTORE */
    syscall(SYS_capset, &head, data);
}

static void *serve(void *arg) {
    int listener = *(int *)arg;
    drop_capabilities();
    ioctl(listener, IOCTL_SET_FLAGS, 1UL); /* SECCOMP_USER_NOTIF_FD_SYNC_WAKE_UP (6.6+); older: ignored */
    struct buf row = {0}, checked = {0};
    for (;;) {
        /* While the phase runs, the receive blocks (no poll before each call: a system call and a
         * wake-up less per reported call); once bwrap has exited (done, and SIGUSR1 interrupts a
         * blocked receive), the last calls are drained by poll until no process carries the
         * filter (a hang-up) or none came for a second. */
        if (done) {
            struct pollfd p = {.fd = listener, .events = POLLIN};
            int ready = poll(&p, 1, 1000);
            if (ready < 0) { if (errno == EINTR) continue; break; }
            if (ready == 0) break;
            if ((p.revents & (POLLHUP | POLLERR)) && !(p.revents & POLLIN)) break; /* no process carries the filter */
        }
        struct notif n;
        memset(&n, 0, sizeof n);
        if (ioctl(listener, IOCTL_RECV, &n) != 0) {
            if (errno == ENOENT || errno == EINTR || errno == EAGAIN) continue; /* the caller went away */
            break;
        }
        row.len = 0;
        put(&row, "", 0);
        checked.len = 0;
        put(&checked, "", 0);
        struct reply rep = {.fd = -1, .error = 0, .cloexec = 0};
        exec_settled(n.pid);
        pending_check(n.pid, n.nr, &checked);  /* a row of its own, before the call's */
        if (n.nr == NR_EXIT_GROUP) exit_row(&n, &row);
        else if (n.nr == NR_EXECVE || n.nr == NR_EXECVEAT) exec_row(&n, &row);
        else if (n.nr == NR_CONNECT) connect_row(&n, &row);
        else if (n.nr == NR_PTRACE) ptrace_row(&n, &row);
        else if (n.nr == NR_OPENAT || n.nr == NR_OPENAT2 || n.nr == NR_OPEN) {
            /* an open that cannot read (O_WRONLY, O_CREAT|O_EXCL: reported for write_row only) is
             * not open_row's: it goes on (CONTINUE) as when the filter let it by */
            uint64_t f = n.nr == NR_OPEN ? n.args[1] : n.args[2];
            if (n.nr == NR_OPENAT2 || !((f & O_ACCMODE) == O_WRONLY || (f & (O_CREAT | O_EXCL)) == (O_CREAT | O_EXCL)))
                open_row(&n, &row, &rep);
            if (!rep.error) write_row(&n);
        } else if (n.nr == NR_SYMLINK || n.nr == NR_SYMLINKAT || n.nr == NR_LINK || n.nr == NR_LINKAT ||
                   n.nr == NR_RENAME || n.nr == NR_RENAMEAT || n.nr == NR_RENAMEAT2 || n.nr == NR_MKNOD ||
                   n.nr == NR_MKNODAT) {
            write_row(&n);
        } else {
            char head[96];
            snprintf(head, sizeof head, "{\"kind\": \"syscall\", \"pid\": %u, \"nr\": %d}\n", n.pid, n.nr);
            puts_(&row, head);
        }
        int answered = 0;
        if (rep.fd >= 0) {  /* the pinned descriptor is the call's result (its number: the caller's lowest free) */
            struct notif_addfd add = {.id = n.id, .flags = ADDFD_FLAG_SEND, .srcfd = (uint32_t)rep.fd, .newfd = 0,
                                      .newfd_flags = rep.cloexec ? O_CLOEXEC : 0};
            int added;
            do added = ioctl(listener, IOCTL_ADDFD, &add); while (added < 0 && errno == EINTR); /* not added: again */
            answered = added >= 0 || errno == ENOENT; /* ENOENT: the caller is gone */
            if (!answered && errno == EINVAL) pin_off = 1; /* no SEND flag (Linux < 5.14): nothing more is pinned */
            else if (!answered) rep.error = errno;         /* the caller's table is full (EMFILE): its answer */
            close(rep.fd);
        }
        if (!answered && rep.error) {
            struct notif_resp r = {.id = n.id, .val = -1, .error = -rep.error, .flags = 0};
            answered = 1;
            ioctl(listener, IOCTL_SEND, &r);
        }
        if (!answered) {
            struct notif_resp r = {.id = n.id, .val = 0, .error = 0, .flags = FLAG_CONTINUE};
            ioctl(listener, IOCTL_SEND, &r);
        }
        if (checked.len > 1) emit(&checked);
        if (row.len > 1) emit(&row);
    }
    free(row.data);
    free(checked.data);
    return NULL;
}

static void wake_up(int sig) { (void)sig; }

int main(int argc, char **argv) {
    if (argc < 6) {
        fprintf(stderr, "usage: %s OUT PYTHON INSTALLER BWRAP-ARGV... -- COMMAND...\n", argv[0]);
        return 64;
    }
    pid_t parent = getppid();
    prctl(PR_SET_PDEATHSIG, SIGKILL); /* die with whoever started us: bwrap (--die-with-parent) follows */
    if (getppid() != parent) return 137;
    int split = -1;
    for (int k = 4; k < argc; k++)
        if (!strcmp(argv[k], "--")) { split = k; break; }
    if (split < 0) { fprintf(stderr, "evotree trace: no -- in the sandbox's command line\n"); return 64; }
    int pair[2];
    /* every descriptor of this process is close-on-exec, but the one end bwrap hands to the installer
     * (which closes it before the phase's command runs) */
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) != 0) { perror("evotree trace: socketpair"); return 70; }
    fcntl(pair[1], F_SETFD, 0);
    char fd_text[16];
    snprintf(fd_text, sizeof fd_text, "%d", pair[1]);
    int total = argc - 4 + 6;
    char **full = calloc((size_t)total + 1, sizeof *full);
    int at = 0;
    for (int k = 4; k <= split; k++) full[at++] = argv[k];
    full[at++] = argv[2];
    full[at++] = "-I";
    full[at++] = "-S";
    full[at++] = "-c";
    full[at++] = argv[3];
    full[at++] = fd_text;
    for (int k = split + 1; k < argc; k++) full[at++] = argv[k];
    full[at] = NULL;
    /* close-on-exec (no process of the sandbox inherits it: issue 29), never through a link */
    int out_fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
    out = out_fd < 0 ? NULL : fdopen(out_fd, "we");
    if (!out) { perror("evotree trace: the trace file"); return 70; }
    sha256_init(&running);
    note_system_gits();
    umask(0); /* files the tracer makes for a caller (create_pinned) get the caller's umask */
    const char *pinning = getenv("EVOTREE_TRACE_PIN");
    pin_some = pinning && !strcmp(pinning, "uncertain");
    pin_off = pinning && !strcmp(pinning, "off");
    /* the tracer's own setting is not the sandbox's: no process in the box sees it (a control run
     * with pinning off would otherwise show the box an environment the pinned run does not) */
    unsetenv("EVOTREE_TRACE_PIN");
    /* fully buffered: a write per 1 MiB, not per row. A tracer killed before its end row loses
     * the rows still buffered -- and the trace without its end row fails the audit closed anyway */
    setvbuf(out, NULL, _IOFBF, 1 << 20);
    pid_t pid;
    int err = posix_spawn(&pid, full[0], NULL, NULL, full, environ);
    if (err) { fprintf(stderr, "evotree trace: %s: %s\n", full[0], strerror(err)); return 127; }
    close(pair[1]);
    /* the program cache holds up to VERDICTS pidfds: room for them beside the /proc files the
     * handlers open (the soft limit raised within the hard one, after the spawn: bwrap and the
     * sandbox keep theirs), else no cache */
    struct rlimit files;
    if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < 4 * VERDICTS) {
        files.rlim_cur = files.rlim_max < 4 * VERDICTS ? files.rlim_max : 4 * VERDICTS;
        setrlimit(RLIMIT_NOFILE, &files);
        if (getrlimit(RLIMIT_NOFILE, &files) != 0 || files.rlim_cur < 2 * VERDICTS) cache_off = 1;
    }
    /* an interrupt, hang-up or termination meant for the session (Ctrl-C on evotree agent, a
     * supervisor's SIGTERM to the group) reaches bwrap, which ends the sandbox; the tracer stays to
     * serve the last calls and write its end record (a trace cut by the signal would fail the audit
     * closed). SIGKILL and the parent-death signal still end it. Set after the spawn: bwrap keeps
     * the default dispositions. */
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    /* a terminal's stop (Ctrl-Z, a background read or write) is the phase's, not the tracer's: a
     * tracer stopped while it hands a pinned file over (ADDFD with SEND) leaves the caller's open
     * answered with a descriptor it did not ask for (docs/benchmarks/trace.md, session 19), and a
     * stopped tracer holds every reported call of the phase */
    signal(SIGTSTP, SIG_IGN);
    signal(SIGTTIN, SIG_IGN);
    signal(SIGTTOU, SIG_IGN);
    struct sigaction wake;
    memset(&wake, 0, sizeof wake);
    wake.sa_handler = wake_up; /* no SA_RESTART: a blocked receive returns EINTR */
    sigaction(SIGUSR1, &wake, NULL);
    pthread_t server;
    int have_server = 0, listener = -1;
    char byte;
    struct iovec io = {.iov_base = &byte, .iov_len = 1};
    union { char space[CMSG_SPACE(sizeof(int))]; struct cmsghdr align; } control;
    struct msghdr msg = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = control.space,
                         .msg_controllen = sizeof control.space};
    ssize_t got;
    do got = recvmsg(pair[0], &msg, MSG_CMSG_CLOEXEC); while (got < 0 && errno == EINTR);
    if (got > 0) {
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            memcpy(&listener, CMSG_DATA(c), sizeof listener);
            have_server = pthread_create(&server, NULL, serve, &listener) == 0;
        }
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    done = 1;
    int drained = 0;
    if (have_server) {
        /* a receive that blocks is interrupted (again, until the server sees done: the signal may
         * come between its check and its receive) */
        for (int tries = 0; tries < 100 && !drained; tries++) {
            pthread_kill(server, SIGUSR1);
            struct timespec until;
            clock_gettime(CLOCK_REALTIME, &until);
            until.tv_nsec += 50 * 1000000L;
            if (until.tv_nsec >= 1000000000L) { until.tv_sec++; until.tv_nsec -= 1000000000L; }
            drained = pthread_timedjoin_np(server, NULL, &until) == 0;
        }
    } else {
        drained = 1;
    }
    /* the last row: how many came before it and the hash of their bytes (a cut trace lacks it) */
    pthread_mutex_lock(&out_lock);
    char digest[65], tail[160];
    sha256_hex(&running, digest);
    snprintf(tail, sizeof tail, "{\"seq\": %llu, \"kind\": \"end\", \"rows\": %llu, \"sha256\": \"%s\"%s}\n",
             (unsigned long long)rows_written, (unsigned long long)rows_written, digest,
             drained ? "" : ", \"drained\": false");
    fputs(tail, out);
    fflush(out);
    fclose(out);
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}
