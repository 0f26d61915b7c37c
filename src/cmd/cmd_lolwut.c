/* LOLWUT [VERSION v] [args]: computer art and the version, as Redis 7.0 answers it. Version 5
 * draws a grid of squares that come loose row after row (after Georg Nees' "Schotter") on a
 * canvas of Braille characters; version 6 a city skyline in terminal colours; any other
 * version only the version line. The drawings are twincache's own. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"

/* ---- a pixel canvas ---- */

struct canvas {
    int w, h;
    unsigned char *px; /* w * h, 0 = background */
};

static int canvas_init(struct canvas *cv, int w, int h)
{
    cv->w = w;
    cv->h = h;
    cv->px = calloc((size_t)w * (size_t)h, 1);
    return cv->px ? 0 : -1;
}

static void plot(struct canvas *cv, int x, int y, unsigned char v)
{
    if (x >= 0 && y >= 0 && x < cv->w && y < cv->h)
        cv->px[(size_t)y * (size_t)cv->w + (size_t)x] = v;
}

static unsigned char pixel(const struct canvas *cv, int x, int y)
{
    if (x < 0 || y < 0 || x >= cv->w || y >= cv->h)
        return 0;
    return cv->px[(size_t)y * (size_t)cv->w + (size_t)x];
}

/* A straight line from (x0,y0) to (x1,y1), one pixel per step of the longer axis. */
static void line(struct canvas *cv, int x0, int y0, int x1, int y1)
{
    int dx = abs(x1 - x0), dy = abs(y1 - y0), steps = dx > dy ? dx : dy;

    for (int i = 0; i <= steps; i++) {
        double t = steps ? (double)i / steps : 0;
        plot(cv, (int)lround(x0 + t * (x1 - x0)), (int)lround(y0 + t * (y1 - y0)), 1);
    }
}

/* Braille: each character shows 2 x 4 pixels; dot bits by (column, row). */
static size_t braille_render(const struct canvas *cv, char *out)
{
    static const unsigned dots[4][2] = {{0x01, 0x08}, {0x02, 0x10}, {0x04, 0x20}, {0x40, 0x80}};
    size_t o = 0;

    for (int y = 0; y < cv->h; y += 4) {
        for (int x = 0; x < cv->w; x += 2) {
            unsigned cp = 0x2800;
            for (int r = 0; r < 4; r++)
                for (int c = 0; c < 2; c++)
                    if (pixel(cv, x + c, y + r))
                        cp |= dots[r][c];
            /* U+2800..U+28FF in UTF-8: three bytes */
            out[o++] = (char)(0xE0 | (cp >> 12));
            out[o++] = (char)(0x80 | ((cp >> 6) & 0x3F));
            out[o++] = (char)(0x80 | (cp & 0x3F));
        }
        out[o++] = '\n';
    }
    return o;
}

static double frand(unsigned *seed)
{
    return (double)rand_r(seed) / ((double)RAND_MAX + 1.0);
}

/* ---- version 5: squares coming loose ---- */

static void lolwut5(struct conn *c, long long cols, long long per_row, long long per_col)
{
    struct canvas cv;
    int w = (int)cols * 2;           /* pixels: two per character column */
    int side = w / (int)per_row;     /* a square's side in pixels */
    int pad = side / 4 > 0 ? side / 4 : 0;
    int h = side * (int)per_col + pad * 2;
    unsigned seed = (unsigned)conn_now(c) ^ (unsigned)(uintptr_t)c;
    static const char tail[] = "\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. " TC_VERSION "\n";

    if (h < 4)
        h = 4;
    if (canvas_init(&cv, w, h)) {
        reply_error(c, "ERR out of memory");
        return;
    }
    for (int row = 0; row < per_col; row++) {
        /* the further down, the looser: rotation and displacement grow with the row */
        double loose = per_col > 1 ? (double)row / (double)(per_col - 1) : 0;
        for (int col = 0; col < per_row; col++) {
            double cx = col * side + side / 2.0, cy = pad + row * side + side / 2.0;
            double a = (frand(&seed) - 0.5) * M_PI / 2 * loose;
            cx += (frand(&seed) - 0.5) * side * 0.5 * loose;
            cy += (frand(&seed) - 0.5) * side * 0.5 * loose;
            double r = side / 2.0 - 1, px[4], py[4];
            for (int k = 0; k < 4; k++) {
                double t = a + M_PI / 4 + k * M_PI / 2;
                px[k] = cx + r * sqrt(2.0) * cos(t);
                py[k] = cy + r * sqrt(2.0) * sin(t);
            }
            for (int k = 0; k < 4; k++)
                line(&cv, (int)lround(px[k]), (int)lround(py[k]), (int)lround(px[(k + 1) % 4]),
                     (int)lround(py[(k + 1) % 4]));
        }
    }
    size_t cap = (size_t)((w + 1) / 2) * 3 * (size_t)((h + 3) / 4) + (size_t)((h + 3) / 4) +
                 sizeof(tail);
    char *out = malloc(cap);
    if (!out) {
        free(cv.px);
        reply_error(c, "ERR out of memory");
        return;
    }
    size_t n = braille_render(&cv, out);
    memcpy(out + n, tail, sizeof(tail) - 1);
    n += sizeof(tail) - 1;
    reply_verbatim(c, out, n);
    free(out);
    free(cv.px);
}

/* ---- version 6: a skyline ---- */

static void lolwut6(struct conn *c, long long cols, long long rows)
{
    /* 0 sky, 1 far buildings, 2 near buildings, 3 lit windows and the moon */
    static const char *cell[4] = {"\033[0;30;40m \033[0m", "\033[0;90;100m \033[0m",
                                  "\033[0;37;47m \033[0m", "\033[0;97;107m \033[0m"};
    static const char tail[] = "\nA city that never sleeps, for the people who keep its caches warm. "
                               "Redis ver. " TC_VERSION "\n";
    struct canvas cv;
    unsigned seed = (unsigned)conn_now(c) ^ (unsigned)(uintptr_t)c;
    int w = (int)cols, h = (int)rows;

    if (canvas_init(&cv, w, h)) {
        reply_error(c, "ERR out of memory");
        return;
    }
    if (w > 4 && h > 4)
        for (int y = 1; y < 3 && y < h; y++)
            for (int x = w - 5; x < w - 3; x++)
                plot(&cv, x, y, 3);
    for (int layer = 1; layer <= 2; layer++) {
        for (int x = 0; x < w;) {
            int bw = 3 + (int)(frand(&seed) * 6);
            int top = (int)(h * (layer == 1 ? 0.15 + frand(&seed) * 0.45 : 0.4 + frand(&seed) * 0.5));
            for (int bx = x; bx < x + bw && bx < w; bx++)
                for (int y = top; y < h; y++)
                    plot(&cv, bx, y, (unsigned char)layer);
            if (layer == 2)
                for (int y = top + 1; y < h - 1; y += 2)
                    for (int bx = x + 1; bx < x + bw - 1 && bx < w; bx += 2)
                        if (frand(&seed) < 0.35)
                            plot(&cv, bx, y, 3);
            x += bw + (layer == 2 ? 1 + (int)(frand(&seed) * 3) : 0);
        }
    }
    size_t cap = (size_t)w * (size_t)h * 16 + (size_t)h + sizeof(tail);
    char *out = malloc(cap);
    if (!out) {
        free(cv.px);
        reply_error(c, "ERR out of memory");
        return;
    }
    size_t n = 0;
    for (int y = 0; y < h; y++) {
        for (int x = 0; x < w; x++) {
            const char *s = cell[pixel(&cv, x, y)];
            size_t l = strlen(s);
            memcpy(out + n, s, l);
            n += l;
        }
        out[n++] = '\n';
    }
    memcpy(out + n, tail, sizeof(tail) - 1);
    n += sizeof(tail) - 1;
    reply_verbatim(c, out, n);
    free(out);
    free(cv.px);
}

static long long clamp(long long v, long long lo, long long hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

static void lolwut_command(struct conn *c)
{
    long long version = 7, a[3];
    int first = 1;

    if (c->argc >= 3 && arg_is(c, 1, "version")) {
        if (arg_ll(c, 2, &version, NULL))
            return;
        first = 3;
    }
    int na = c->argc - first;
    for (int i = 0; (version == 5 || version == 6) && i < na && i < 3; i++)
        if (arg_ll(c, first + i, &a[i], NULL))
            return;
    if (version == 5) {
        lolwut5(c, clamp(na > 0 ? a[0] : 66, 1, 1000), clamp(na > 1 ? a[1] : 8, 1, 200),
                clamp(na > 2 ? a[2] : 12, 1, 200));
    } else if (version == 6) {
        lolwut6(c, clamp(na > 0 ? a[0] : 80, 1, 1000), clamp(na > 1 ? a[1] : 20, 1, 1000));
    } else {
        static const char v[] = "Redis ver. " TC_VERSION "\n";
        reply_verbatim(c, v, sizeof(v) - 1);
    }
}

static struct cmd cmds[] = {
    {"lolwut", lolwut_command, -1, "readonly fast", "", NULL, "server", "Display some computer art and the Redis version"},
};

void cmd_lolwut_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
