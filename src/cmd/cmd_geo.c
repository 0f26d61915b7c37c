/* Geo commands on sorted sets: GEOADD GEOPOS GEODIST GEOHASH GEOSEARCH GEOSEARCHSTORE GEORADIUS*
 * (Redis 7.0). A position is stored as a zset member whose score is its 52-bit geohash: the
 * latitude and longitude cell numbers (26 bits each, over [-85.05112878, 85.05112878] and
 * [-180, 180]) interleaved, latitude in the even bits. A search looks at the cell holding the
 * centre and its eight neighbours at a precision chosen from the radius, reads each cell's
 * score range, and keeps the members whose decoded position (the cell centre) passes the exact
 * distance test, so the results, and their order, are Redis's. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/notify.h"
#include "cmd/cmd.h"
#include "cmd/coll.h"
#include "store/t_zset.h"

#define GEO_LAT_MIN -85.05112878
#define GEO_LAT_MAX 85.05112878
#define GEO_LON_MIN -180.0
#define GEO_LON_MAX 180.0
#define GEO_STEP 26
#define EARTH_RADIUS 6372797.560856 /* metres, as Redis */
#define MERCATOR_MAX 20037726.37
#define D_R (M_PI / 180.0)

#define ERR_UNIT "ERR unsupported unit provided. please use M, KM, FT, MI"
#define ERR_MEMBER "ERR could not decode requested zset member"

struct grange {
    double min, max;
};

struct cell {
    uint64_t bits; /* interleaved cell numbers, latitude in the even bits */
    int step;      /* bits per coordinate; 0 with bits 0: no cell */
};

struct garea {
    struct grange lon, lat;
};

static const struct grange wgs_lon = {GEO_LON_MIN, GEO_LON_MAX};
static const struct grange wgs_lat = {GEO_LAT_MIN, GEO_LAT_MAX};

/* ---- geohash arithmetic ---- */

/* The 32 bits of v moved to the even bits of the result. */
static uint64_t spread(uint32_t v)
{
    uint64_t x = v;

    x = (x | (x << 16)) & 0x0000FFFF0000FFFFULL;
    x = (x | (x << 8)) & 0x00FF00FF00FF00FFULL;
    x = (x | (x << 4)) & 0x0F0F0F0F0F0F0F0FULL;
    x = (x | (x << 2)) & 0x3333333333333333ULL;
    x = (x | (x << 1)) & 0x5555555555555555ULL;
    return x;
}

/* The even bits of v, packed. */
static uint32_t squash(uint64_t v)
{
    uint64_t x = v & 0x5555555555555555ULL;

    x = (x | (x >> 1)) & 0x3333333333333333ULL;
    x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0FULL;
    x = (x | (x >> 4)) & 0x00FF00FF00FF00FFULL;
    x = (x | (x >> 8)) & 0x0000FFFF0000FFFFULL;
    x = (x | (x >> 16)) & 0x00000000FFFFFFFFULL;
    return (uint32_t)x;
}

/* The cell of (lon, lat) at step over the ranges. Returns 0 outside them (h->bits 0). */
static int geo_encode(const struct grange *lonr, const struct grange *latr, double lon, double lat,
                      int step, struct cell *h)
{
    h->bits = 0;
    h->step = step;
    if (!(lon >= GEO_LON_MIN && lon <= GEO_LON_MAX && lat >= GEO_LAT_MIN && lat <= GEO_LAT_MAX))
        return 0;
    if (lat < latr->min || lat > latr->max || lon < lonr->min || lon > lonr->max)
        return 0;
    double lato = (lat - latr->min) / (latr->max - latr->min);
    double lono = (lon - lonr->min) / (lonr->max - lonr->min);
    /* in [0, 2^step]: the top edge gives 2^step, one bit above the cell number, as Redis */
    lato *= (double)(1ULL << step);
    lono *= (double)(1ULL << step);
    h->bits = spread((uint32_t)lato) | (spread((uint32_t)lono) << 1);
    return 1;
}

static void geo_decode(const struct grange *lonr, const struct grange *latr, struct cell h,
                       struct garea *a)
{
    uint32_t ilat = squash(h.bits), ilon = squash(h.bits >> 1);
    double div = (double)(1ULL << h.step);
    double lats = latr->max - latr->min, lons = lonr->max - lonr->min;

    /* the +1 wraps in 32 bits, as Redis's */
    a->lat.min = latr->min + (ilat * 1.0 / div) * lats;
    a->lat.max = latr->min + ((uint32_t)(ilat + 1) * 1.0 / div) * lats;
    a->lon.min = lonr->min + (ilon * 1.0 / div) * lons;
    a->lon.max = lonr->min + ((uint32_t)(ilon + 1) * 1.0 / div) * lons;
}

/* A score as the 64 bits Redis reads from it: its (uint64_t) conversion as x86-64 performs it
 * (defined here for every double, so hostile ZADD scores decode as they do in Redis). */
static uint64_t score_bits(double s)
{
    const double two63 = 9223372036854775808.0;

    if (s >= two63) {
        double r = s - two63;
        if (!(r < two63))
            return 0; /* indefinite integer xor the top bit */
        return (uint64_t)(int64_t)r ^ 0x8000000000000000ULL;
    }
    if (s >= -two63)
        return (uint64_t)(int64_t)s;
    return 0x8000000000000000ULL; /* out of range or NaN: the indefinite integer */
}

/* The position a score stands for: its cell's centre, clamped to the limits. */
static void score_xy(double score, double xy[2])
{
    struct cell h = {score_bits(score), GEO_STEP};
    struct garea a;

    geo_decode(&wgs_lon, &wgs_lat, h, &a);
    xy[0] = (a.lon.min + a.lon.max) / 2;
    if (xy[0] > GEO_LON_MAX)
        xy[0] = GEO_LON_MAX;
    if (xy[0] < GEO_LON_MIN)
        xy[0] = GEO_LON_MIN;
    xy[1] = (a.lat.min + a.lat.max) / 2;
    if (xy[1] > GEO_LAT_MAX)
        xy[1] = GEO_LAT_MAX;
    if (xy[1] < GEO_LAT_MIN)
        xy[1] = GEO_LAT_MIN;
}

static double deg_rad(double d)
{
    return d * D_R;
}

static double rad_deg(double r)
{
    return r / D_R;
}

/* Great-circle distance in metres (haversine). On one meridian it is the latitude difference
 * times the radius: Redis takes that shortcut, and the last bits it changes decide the order
 * of equal-looking distances. */
static double geo_distance(double lon1, double lat1, double lon2, double lat2)
{
    double v = sin((deg_rad(lon2) - deg_rad(lon1)) / 2);

    if (v == 0.0)
        return EARTH_RADIUS * fabs(deg_rad(lat2) - deg_rad(lat1));
    double lat1r = deg_rad(lat1), lat2r = deg_rad(lat2);
    double u = sin((lat2r - lat1r) / 2);
    return 2.0 * EARTH_RADIUS * asin(sqrt(u * u + cos(lat1r) * cos(lat2r) * v * v));
}

/* Move a cell by d (+1/-1) along longitude (odd bits) or latitude (even bits), wrapping. */
static void cell_move(struct cell *h, int d, int lon)
{
    uint64_t odd = 0xaaaaaaaaaaaaaaaaULL, even = 0x5555555555555555ULL;
    uint64_t mine = h->bits & (lon ? odd : even), other = h->bits & (lon ? even : odd);
    uint64_t fill = (lon ? even : odd) >> (64 - h->step * 2);

    if (d > 0) {
        mine += fill + 1;
    } else {
        mine |= fill;
        mine -= fill + 1;
    }
    mine &= (lon ? odd : even) >> (64 - h->step * 2);
    h->bits = mine | other;
}

/* ---- arguments ---- */

/* Metres per unit of argv[i], or -1 after replying the error. */
static double arg_unit(struct conn *c, int i)
{
    if (arg_is(c, i, "m"))
        return 1;
    if (arg_is(c, i, "km"))
        return 1000;
    if (arg_is(c, i, "ft"))
        return 0.3048;
    if (arg_is(c, i, "mi"))
        return 1609.34;
    reply_error(c, ERR_UNIT);
    return -1;
}

/* argv[i], argv[i+1] as a valid longitude, latitude. */
static int arg_lonlat(struct conn *c, int i, double xy[2])
{
    if (arg_double(c, i, &xy[0], NULL) || arg_double(c, i + 1, &xy[1], NULL))
        return -1;
    if (xy[0] < GEO_LON_MIN || xy[0] > GEO_LON_MAX || xy[1] < GEO_LAT_MIN || xy[1] > GEO_LAT_MAX) {
        reply_errorf(c, "ERR invalid longitude,latitude pair %f,%f", xy[0], xy[1]);
        return -1;
    }
    return 0;
}

/* ---- replies ---- */

/* A coordinate as Redis's addReplyHumanLongDouble: 17 decimals of the long double, trailing
 * zeros dropped; a bulk string in RESP2, a double in RESP3. */
static void reply_coord(struct conn *c, double v)
{
    char tmp[64];
    int n = snprintf(tmp, sizeof(tmp), "%.17Lf", (long double)v);

    if (n <= 0 || n >= (int)sizeof(tmp)) {
        reply_double(c, v);
        return;
    }
    if (strchr(tmp, '.')) {
        while (n > 0 && tmp[n - 1] == '0')
            n--;
        if (n > 0 && tmp[n - 1] == '.')
            n--;
    }
    if (n == 2 && tmp[0] == '-' && tmp[1] == '0') {
        tmp[0] = '0';
        n = 1;
    }
    if (c->resp == 2) {
        reply_bulk(c, tmp, (size_t)n);
    } else {
        char out[80];
        int m = snprintf(out, sizeof(out), ",%.*s\r\n", n, tmp);
        reply_raw(c, out, (size_t)m);
    }
}

/* A distance: bulk string with 4 decimals. */
static void reply_dist(struct conn *c, double d)
{
    char tmp[400];
    int n = snprintf(tmp, sizeof(tmp), "%.4f", d);

    reply_bulk(c, tmp, n > 0 && n < (int)sizeof(tmp) ? (size_t)n : 0);
}

/* ---- GEOADD ---- */

static void geoadd_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int i = 2, flags = 0, ch = 0, wrong;
    long long added = 0, updated = 0;
    double small[32], *scores = small;

    for (; i < c->argc; i++) {
        if (arg_is(c, i, "nx"))
            flags |= ZADD_NX;
        else if (arg_is(c, i, "xx"))
            flags |= ZADD_XX;
        else if (arg_is(c, i, "ch"))
            ch = 1;
        else
            break;
    }
    int n = c->argc - i;
    if (n % 3 || n == 0 || ((flags & ZADD_NX) && (flags & ZADD_XX))) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    n /= 3;
    if (n > 32 && !(scores = malloc(sizeof(double) * (size_t)n))) {
        reply_error(c, "ERR out of memory");
        return;
    }
    for (int j = 0; j < n; j++) {
        double xy[2];
        struct cell h;
        if (arg_lonlat(c, i + j * 3, xy))
            goto out_free;
        geo_encode(&wgs_lon, &wgs_lat, xy[0], xy[1], GEO_STEP, &h);
        scores[j] = (double)h.bits;
    }
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_write(c, &k, OBJ_ZSET, &wrong);
    if (wrong)
        goto out;
    if (!it) {
        if (flags & ZADD_XX)
            goto reply;
        struct tzset *z = tzset_create(0, c->argv[i + 2].n);
        if (!z) {
            reply_error(c, "ERR out of memory");
            goto out;
        }
        if (!(it = coll_put(c, &k, OBJ_ZSET, z)))
            goto out;
    }
    size_t before = item_value_mem(it);
    struct tzset *z = item_ptr(it);
    for (int j = 0; j < n; j++) {
        int of;
        double ns;
        const struct slice *m = &c->argv[i + j * 3 + 2];
        if (tzset_add(z, scores[j], m->p, m->n, flags, &of, &ns) <= 0) {
            int empty = tzset_len(z) == 0;
            coll_done(c, &k, it, before, empty);
            if (added || updated)
                cmd_modified(c, &k, empty ? NULL : it);
            reply_error(c, "ERR out of memory");
            goto out;
        }
        added += (of & ZADD_OUT_ADDED) != 0;
        updated += (of & ZADD_OUT_UPDATED) != 0;
    }
    coll_done(c, &k, it, before, 0);
    if (added || updated) {
        cmd_modified(c, &k, it);
        notify_event(NOTIFY_ZSET, "zadd", &k);
    }
reply:
    reply_int(c, ch ? added + updated : added);
out:
    store_unlock(s, k.stripe);
out_free:
    if (scores != small)
        free(scores);
}

/* ---- GEOPOS / GEOHASH / GEODIST ---- */

static void geopos_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int wrong;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_read(c, &k, OBJ_ZSET, &wrong);
    if (!wrong) {
        reply_array(c, c->argc - 2);
        for (int i = 2; i < c->argc; i++) {
            double score, xy[2];
            if (!it || !tzset_score(item_ptr(it), c->argv[i].p, c->argv[i].n, &score)) {
                reply_null_array(c);
                continue;
            }
            score_xy(score, xy);
            reply_array(c, 2);
            reply_coord(c, xy[0]);
            reply_coord(c, xy[1]);
        }
    }
    store_unlock(s, k.stripe);
}

static void geohash_command(struct conn *c)
{
    static const char alphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
    /* the standard geohash covers latitudes [-90, 90] */
    static const struct grange std_lat = {-90, 90};
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int wrong;

    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_read(c, &k, OBJ_ZSET, &wrong);
    if (!wrong) {
        reply_array(c, c->argc - 2);
        for (int i = 2; i < c->argc; i++) {
            double score, xy[2];
            struct cell h;
            char out[11];
            if (!it || !tzset_score(item_ptr(it), c->argv[i].p, c->argv[i].n, &score)) {
                reply_null(c);
                continue;
            }
            score_xy(score, xy);
            geo_encode(&wgs_lon, &std_lat, xy[0], xy[1], GEO_STEP, &h);
            /* 52 bits make 10 characters and 2 bits; the 11th is '0' */
            for (int j = 0; j < 11; j++)
                out[j] = j == 10 ? '0' : alphabet[(h.bits >> (52 - (j + 1) * 5)) & 0x1f];
            reply_bulk(c, out, sizeof(out));
        }
    }
    store_unlock(s, k.stripe);
}

static void geodist_command(struct conn *c)
{
    struct store *s = conn_store(c);
    struct skey k;
    struct item *it;
    int wrong;
    double unit = 1, s1, s2, a[2], b[2];

    if (c->argc == 5) {
        if ((unit = arg_unit(c, 4)) < 0)
            return;
    } else if (c->argc > 5) {
        reply_error(c, ERR_SYNTAX);
        return;
    }
    arg_key(c, 1, &k);
    store_lock(s, k.stripe);
    it = coll_read(c, &k, OBJ_ZSET, &wrong);
    if (wrong)
        goto out;
    if (!it || !tzset_score(item_ptr(it), c->argv[2].p, c->argv[2].n, &s1) ||
        !tzset_score(item_ptr(it), c->argv[3].p, c->argv[3].n, &s2)) {
        reply_null(c);
        goto out;
    }
    score_xy(s1, a);
    score_xy(s2, b);
    reply_dist(c, geo_distance(a[0], a[1], b[0], b[1]) / unit);
out:
    store_unlock(s, k.stripe);
}

/* ---- searches ---- */

struct shape {
    int box;        /* BYBOX, else BYRADIUS */
    double xy[2];   /* centre */
    double conv;    /* metres per unit */
    double radius;  /* in units */
    double w, h;    /* box, in units */
};

struct gpoint {
    double lon, lat, dist, score;
    const char *m; /* member, borrowed from the source zset (locked) */
    size_t n;
};

struct garray {
    struct gpoint *a;
    size_t used, cap;
};

/* Cells covering the shape: the centre's and its neighbours (north, south, east, west,
 * north-east, north-west, south-east, south-west), some cleared when outside the box. */
static void shape_cells(const struct shape *sh, struct cell out[9])
{
    double lon = sh->xy[0], lat = sh->xy[1];
    double hm = sh->conv * (sh->box ? sh->h / 2 : sh->radius);
    double wm = sh->conv * (sh->box ? sh->w / 2 : sh->radius);
    double latd = rad_deg(hm / EARTH_RADIUS);
    double top = rad_deg(wm / EARTH_RADIUS / cos(deg_rad(lat + latd)));
    double bottom = rad_deg(wm / EARTH_RADIUS / cos(deg_rad(lat - latd)));
    /* the wider edge of the box is the one nearer the equator */
    double lonmin = lat < 0 ? lon - bottom : lon - top;
    double lonmax = lat < 0 ? lon + bottom : lon + top;
    double latmin = lat - latd, latmax = lat + latd;
    double r = sh->box ? sqrt((sh->w / 2) * (sh->w / 2) + (sh->h / 2) * (sh->h / 2)) : sh->radius;
    int step = 1;
    static const int8_t mv[9][2] = {{0, 0},  {0, 1},  {0, -1}, {1, 0},  {-1, 0},
                                    {1, 1},  {-1, 1}, {1, -1}, {-1, -1}};

    r *= sh->conv;
    /* the precision whose cells are about as large as the radius */
    if (r == 0) {
        step = 26;
    } else {
        while (r < MERCATOR_MAX) {
            r *= 2;
            step++;
        }
        step -= 2;
        if (lat > 66 || lat < -66) {
            step--;
            if (lat > 80 || lat < -80)
                step--;
        }
        if (step < 1)
            step = 1;
        if (step > 26)
            step = 26;
    }
    struct garea area, side[4];
    for (int pass = 0; pass < 2; pass++) {
        geo_encode(&wgs_lon, &wgs_lat, lon, lat, step, &out[0]);
        for (int i = 1; i < 9; i++) {
            out[i] = out[0];
            if (mv[i][0])
                cell_move(&out[i], mv[i][0], 1);
            if (mv[i][1])
                cell_move(&out[i], mv[i][1], 0);
        }
        geo_decode(&wgs_lon, &wgs_lat, out[0], &area);
        if (pass == 1)
            break;
        /* too coarse when a side neighbour does not reach the box's edge */
        for (int i = 0; i < 4; i++)
            geo_decode(&wgs_lon, &wgs_lat, out[i + 1], &side[i]);
        int coarse = side[0].lat.max < latmax || side[1].lat.min > latmin ||
                     side[2].lon.max < lonmax || side[3].lon.min > lonmin;
        if (!(step > 1 && coarse))
            break;
        step--;
    }
    if (step >= 2) {
        /* drop neighbours on the far side of an edge the box does not cross */
        static const struct cell none = {0, 0};
        if (area.lat.min < latmin)
            out[2] = out[7] = out[8] = none;
        if (area.lat.max > latmax)
            out[1] = out[5] = out[6] = none;
        if (area.lon.min < lonmin)
            out[4] = out[8] = out[6] = none;
        if (area.lon.max > lonmax)
            out[3] = out[7] = out[5] = none;
    }
}

/* Is the position xy inside the shape; *dist is then its distance from the centre (metres). */
static int shape_has(const struct shape *sh, const double xy[2], double *dist)
{
    if (!sh->box) {
        *dist = geo_distance(sh->xy[0], sh->xy[1], xy[0], xy[1]);
        return *dist <= sh->radius * sh->conv;
    }
    double londist = geo_distance(xy[0], xy[1], sh->xy[0], xy[1]);
    double latdist = geo_distance(xy[0], xy[1], xy[0], sh->xy[1]);
    if (londist > sh->w * sh->conv / 2 || latdist > sh->h * sh->conv / 2)
        return 0;
    *dist = geo_distance(sh->xy[0], sh->xy[1], xy[0], xy[1]);
    return 1;
}

/* Add the members of cell h inside the shape to ga, stopping at limit (0: none).
 * Returns -1 when out of memory. */
static int cell_members(const struct tzset *z, struct cell h, const struct shape *sh,
                        struct garray *ga, size_t limit)
{
    int shift = 52 - h.step * 2;
    double min = (double)(h.bits << shift), max = (double)((h.bits + 1) << shift);
    unsigned long a = tzset_count_below_score(z, min, 0), b = tzset_count_below_score(z, max, 0);
    struct zit it;

    if (a >= b)
        return 0;
    zit_seek(&it, z, a);
    for (unsigned long i = a; i < b; i++) {
        struct gpoint p;
        double xy[2];
        p.m = zit_get(&it, &p.n, &p.score);
        score_xy(p.score, xy);
        if (shape_has(sh, xy, &p.dist)) {
            if (ga->used == ga->cap) {
                size_t cap = ga->cap ? ga->cap * 2 : 16;
                struct gpoint *na = realloc(ga->a, cap * sizeof(*na));
                if (!na)
                    return -1;
                ga->a = na;
                ga->cap = cap;
            }
            p.lon = xy[0];
            p.lat = xy[1];
            ga->a[ga->used++] = p;
            if (limit && ga->used >= limit)
                break;
        }
        if (i + 1 < b)
            zit_next(&it);
    }
    return 0;
}

static int search(const struct tzset *z, const struct shape *sh, struct garray *ga, size_t limit)
{
    struct cell cells[9];
    int last = 0;

    shape_cells(sh, cells);
    for (int i = 0; i < 9; i++) {
        if (cells[i].bits == 0 && cells[i].step == 0)
            continue;
        /* huge radii make neighbours repeat: skip a cell equal to the one just read (never
         * compared with the centre, as in Redis) */
        if (last && cells[i].bits == cells[last].bits && cells[i].step == cells[last].step)
            continue;
        if (ga->used && limit && ga->used >= limit)
            break;
        if (cell_members(z, cells[i], sh, ga, limit))
            return -1;
        last = i;
    }
    return 0;
}

static int by_dist_asc(const void *x, const void *y)
{
    const struct gpoint *a = x, *b = y;

    if (a->dist == b->dist)
        return 0;
    return a->dist < b->dist ? -1 : 1;
}

static int by_dist_desc(const void *x, const void *y)
{
    return by_dist_asc(y, x);
}

/* The search reply: members, each with its distance (4 decimals, in units), hash and
 * coordinates when asked. */
static void reply_points(struct conn *c, const struct gpoint *pts, size_t n, double conv,
                         int withdist, int withhash, int withcoord)
{
    int extra = withdist + withhash + withcoord;

    reply_array(c, (long long)n);
    for (size_t i = 0; i < n; i++) {
        const struct gpoint *p = &pts[i];
        if (extra)
            reply_array(c, extra + 1);
        reply_bulk(c, p->m, p->n);
        if (withdist)
            reply_dist(c, p->dist / conv);
        if (withhash)
            reply_int(c, (long long)score_bits(p->score));
        if (withcoord) {
            reply_array(c, 2);
            reply_coord(c, p->lon);
            reply_coord(c, p->lat);
        }
    }
}

/* A new zset of the points scored by their geohash, or by their distance in units when
 * distconv (metres per unit) is set. NULL when out of memory. */
static struct tzset *points_zset(const struct gpoint *pts, size_t n, double distconv)
{
    struct tzset *z = tzset_create(n, (size_t)-1);
    size_t maxlen = 0;

    if (!z)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        const struct gpoint *p = &pts[i];
        int of;
        double ns;
        if (tzset_add(z, distconv ? p->dist / distconv : p->score, p->m, p->n, 0, &of, &ns) <= 0)
            goto fail;
        if (p->n > maxlen)
            maxlen = p->n;
    }
    /* like Redis's result, a listpack when small */
    if (tzset_shrink_if_small(z, maxlen))
        goto fail;
    return z;
fail:
    tzset_destroy(z);
    return NULL;
}

enum { SRC_COORDS = 1, SRC_MEMBER = 2, SRC_SEARCH = 4, SRC_SEARCHSTORE = 8, SRC_NOSTORE = 16 };
enum { SORT_NONE, SORT_ASC, SORT_DESC };

/* argv index of the STORE/STOREDIST key of a GEORADIUS* command, or 0: a dry run of the
 * option grammar (values unchecked) to lock the key before running it for real. */
static int find_store_key(struct conn *c, int base, int flags)
{
    int key = 0;

    if (flags & (SRC_NOSTORE | SRC_SEARCH))
        return 0;
    for (int i = base; i < c->argc; i++) {
        int left = c->argc - i - 1;
        if (arg_is(c, i, "count") && left >= 1)
            i++;
        else if ((arg_is(c, i, "store") || arg_is(c, i, "storedist")) && left >= 1)
            key = ++i;
        else if (!arg_is(c, i, "withdist") && !arg_is(c, i, "withhash") &&
                 !arg_is(c, i, "withcoord") && !arg_is(c, i, "any") && !arg_is(c, i, "asc") &&
                 !arg_is(c, i, "desc"))
            return 0; /* a syntax error: nothing is stored */
    }
    return key;
}

/* argv[i], argv[i+1]: a radius and its unit. */
static int arg_radius(struct conn *c, int i, struct shape *sh)
{
    if (arg_double(c, i, &sh->radius, "ERR need numeric radius"))
        return -1;
    if (sh->radius < 0) {
        reply_error(c, "ERR radius cannot be negative");
        return -1;
    }
    if ((sh->conv = arg_unit(c, i + 1)) < 0)
        return -1;
    sh->box = 0;
    return 0;
}

static int member_xy(struct conn *c, struct item *it, int i, double xy[2])
{
    double score;

    if (!tzset_score(item_ptr(it), c->argv[i].p, c->argv[i].n, &score)) {
        reply_error(c, ERR_MEMBER);
        return -1;
    }
    score_xy(score, xy);
    return 0;
}

/* Every search command: Redis's georadiusGeneric. src: argv index of the source key. */
static void geo_search(struct conn *c, int src, int flags)
{
    struct store *s = conn_store(c);
    struct skey keys[2];
    int nkeys = 1, base, storei = 0, storedist = 0, wrong;
    struct shape sh = {0};
    struct garray ga = {0};

    if (flags & SRC_COORDS)
        base = 6;
    else if (flags & SRC_MEMBER)
        base = 5;
    else
        base = (flags & SRC_SEARCHSTORE) ? 3 : 2;
    if (flags & SRC_SEARCHSTORE)
        storei = 1;
    else
        storei = find_store_key(c, base, flags);
    arg_key(c, src, &keys[0]);
    if (storei)
        arg_key(c, storei, &keys[nkeys++]);
    store_lock_keys(s, keys, nkeys);
    struct item *it = coll_read(c, &keys[0], OBJ_ZSET, &wrong);
    if (wrong)
        goto out;
    if (flags & SRC_COORDS) {
        if (arg_lonlat(c, 2, sh.xy) || arg_radius(c, 4, &sh))
            goto out;
    } else if ((flags & SRC_MEMBER) && it) {
        if (member_xy(c, it, 2, sh.xy) || arg_radius(c, 3, &sh))
            goto out;
    }

    int withdist = 0, withhash = 0, withcoord = 0, any = 0, sort = SORT_NONE;
    int frommember = 0, fromloc = 0, byradius = 0, bybox = 0, stored = 0;
    long long count = 0;
    for (int i = base; i < c->argc; i++) {
        int left = c->argc - i - 1;
        if (arg_is(c, i, "withdist")) {
            withdist = 1;
        } else if (arg_is(c, i, "withhash")) {
            withhash = 1;
        } else if (arg_is(c, i, "withcoord")) {
            withcoord = 1;
        } else if (arg_is(c, i, "any")) {
            any = 1;
        } else if (arg_is(c, i, "asc")) {
            sort = SORT_ASC;
        } else if (arg_is(c, i, "desc")) {
            sort = SORT_DESC;
        } else if (arg_is(c, i, "count") && left >= 1) {
            if (arg_ll(c, i + 1, &count, NULL))
                goto out;
            if (count <= 0) {
                reply_error(c, "ERR COUNT must be > 0");
                goto out;
            }
            i++;
        } else if (!(flags & (SRC_NOSTORE | SRC_SEARCH)) && left >= 1 &&
                   (arg_is(c, i, "store") || arg_is(c, i, "storedist"))) {
            storedist = arg_is(c, i, "storedist");
            stored = ++i;
        } else if ((flags & SRC_SEARCHSTORE) && arg_is(c, i, "storedist")) {
            storedist = 1;
        } else if ((flags & SRC_SEARCH) && !fromloc && left >= 1 && arg_is(c, i, "frommember")) {
            /* without a source key the member is not looked up: parsing goes on */
            if (it && member_xy(c, it, i + 1, sh.xy))
                goto out;
            frommember = 1;
            i++;
        } else if ((flags & SRC_SEARCH) && !frommember && left >= 2 &&
                   arg_is(c, i, "fromlonlat")) {
            if (arg_lonlat(c, i + 1, sh.xy))
                goto out;
            fromloc = 1;
            i += 2;
        } else if ((flags & SRC_SEARCH) && !bybox && left >= 2 && arg_is(c, i, "byradius")) {
            if (arg_radius(c, i + 1, &sh))
                goto out;
            byradius = 1;
            i += 2;
        } else if ((flags & SRC_SEARCH) && !byradius && left >= 3 && arg_is(c, i, "bybox")) {
            if (arg_double(c, i + 1, &sh.w, "ERR need numeric width") ||
                arg_double(c, i + 2, &sh.h, "ERR need numeric height"))
                goto out;
            if (sh.h < 0 || sh.w < 0) {
                reply_error(c, "ERR height or width cannot be negative");
                goto out;
            }
            if ((sh.conv = arg_unit(c, i + 3)) < 0)
                goto out;
            sh.box = 1;
            bybox = 1;
            i += 3;
        } else {
            reply_error(c, ERR_SYNTAX);
            goto out;
        }
    }
    if (flags & SRC_SEARCHSTORE)
        stored = 1;
    if (stored != storei) {
        /* cannot happen: find_store_key follows this grammar */
        reply_error(c, ERR_SYNTAX);
        goto out;
    }
    if (stored && (withdist || withhash || withcoord)) {
        reply_errorf(c, "ERR %s is not compatible with WITHDIST, WITHHASH and WITHCOORD options",
                     (flags & SRC_SEARCHSTORE) ? "GEOSEARCHSTORE" : "STORE option in GEORADIUS");
        goto out;
    }
    if ((flags & SRC_SEARCH) && !(frommember || fromloc)) {
        reply_errorf(c, "ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for %.*s",
                     (int)c->argv[0].n, c->argv[0].p);
        goto out;
    }
    if ((flags & SRC_SEARCH) && !(byradius || bybox)) {
        reply_errorf(c, "ERR exactly one of BYRADIUS and BYBOX can be specified for %.*s",
                     (int)c->argv[0].n, c->argv[0].p);
        goto out;
    }
    if (any && !count) {
        reply_error(c, "ERR the ANY argument requires COUNT argument");
        goto out;
    }
    if (!it) {
        if (stored) {
            if (store_delete_locked(s, &keys[1], conn_now(c)))
                notify_event(NOTIFY_GENERIC, "del", &keys[1]);
            reply_int(c, 0);
        } else {
            reply_array(c, 0);
        }
        goto out;
    }
    if (count && sort == SORT_NONE && !any)
        sort = SORT_ASC;
    const struct tzset *z = item_ptr(it);
    if (search(z, &sh, &ga, any ? (size_t)count : 0)) {
        reply_error(c, "ERR out of memory");
        goto out;
    }
    if (sort != SORT_NONE && ga.used > 1)
        qsort(ga.a, ga.used, sizeof(*ga.a), sort == SORT_ASC ? by_dist_asc : by_dist_desc);
    size_t n = ga.used;
    if (count && (unsigned long long)count < n)
        n = (size_t)count;
    if (!stored)
        reply_points(c, ga.a, n, sh.conv, withdist, withhash, withcoord);
    else if (n == 0) {
        if (store_delete_locked(s, &keys[1], conn_now(c)))
            notify_event(NOTIFY_GENERIC, "del", &keys[1]);
        reply_int(c, 0);
    } else {
        /* the source may be the destination: nothing of it is read after this */
        struct tzset *dst = points_zset(ga.a, n, storedist ? sh.conv : 0);
        if (!dst)
            reply_error(c, "ERR out of memory");
        else if (coll_put(c, &keys[1], OBJ_ZSET, dst)) {
            notify_event(NOTIFY_ZSET, !strcmp(cmd_current->name, "geosearchstore") ?
                         "geosearchstore" : "georadiusstore", &keys[1]);
            reply_int(c, (long long)n);
        }
    }
out:
    store_unlock_keys(s, keys, nkeys);
    free(ga.a);
}

static void georadius_command(struct conn *c)
{
    geo_search(c, 1, SRC_COORDS);
}

static void georadius_ro_command(struct conn *c)
{
    geo_search(c, 1, SRC_COORDS | SRC_NOSTORE);
}

static void georadiusbymember_command(struct conn *c)
{
    geo_search(c, 1, SRC_MEMBER);
}

static void georadiusbymember_ro_command(struct conn *c)
{
    geo_search(c, 1, SRC_MEMBER | SRC_NOSTORE);
}

static void geosearch_command(struct conn *c)
{
    geo_search(c, 1, SRC_SEARCH);
}

static void geosearchstore_command(struct conn *c)
{
    geo_search(c, 2, SRC_SEARCH | SRC_SEARCHSTORE);
}

/* GEORADIUS and GEORADIUSBYMEMBER are write commands whose STORE key moves (as in Redis):
 * CMD_MOVABLE makes WATCH, blocking and the AOF consider every argument a possible key. */
static struct cmd cmds[] = {
    {"geoadd", geoadd_command, -5, "write denyoom tc:signals", "@geo", "RW,update index:1 range:0,1,0", "geo", "Add one or more geospatial items in the geospatial index represented using a sorted set"},
    {"geopos", geopos_command, -2, "readonly", "@geo", "RO,access index:1 range:0,1,0", "geo", "Returns longitude and latitude of members of a geospatial index"},
    {"geohash", geohash_command, -2, "readonly", "@geo", "RO,access index:1 range:0,1,0", "geo", "Returns members of a geospatial index as standard geohash strings"},
    {"geodist", geodist_command, -4, "readonly", "@geo", "RO,access index:1 range:0,1,0", "geo", "Returns the distance between two members of a geospatial index"},
    {"georadius", georadius_command, -6, "write denyoom", "@geo", "RO,access index:1 range:0,1,0; OW,update keyword:STORE:6 range:0,1,0; OW,update keyword:STOREDIST:6 range:0,1,0", "geo", "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a point"},
    {"georadius_ro", georadius_ro_command, -6, "readonly", "@geo", "RO,access index:1 range:0,1,0", "geo", "A read-only variant for GEORADIUS"},
    {"georadiusbymember", georadiusbymember_command, -5, "write denyoom", "@geo", "RO,access index:1 range:0,1,0; OW,update keyword:STORE:5 range:0,1,0; OW,update keyword:STOREDIST:5 range:0,1,0", "geo", "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a member"},
    {"georadiusbymember_ro", georadiusbymember_ro_command, -5, "readonly", "@geo", "RO,access index:1 range:0,1,0", "geo", "A read-only variant for GEORADIUSBYMEMBER"},
    {"geosearch", geosearch_command, -7, "readonly", "@geo", "RO,access index:1 range:0,1,0", "geo", "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle."},
    {"geosearchstore", geosearchstore_command, -8, "write denyoom", "@geo", "OW,update index:1 range:0,1,0; RO,access index:2 range:0,1,0", "geo", "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle, and store the result in another key."},
};

void cmd_geo_setup(void)
{
    cmd_register(cmds, (int)(sizeof(cmds) / sizeof(cmds[0])));
}
