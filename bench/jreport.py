"""Tables and the HTML report over twinbench's JSON and the JVM driver's JSON (bench/java),
used by bench/compare: per server, the C driver's row beside each Java client's row.

Both drivers write the same JSON (bench/report.c report_json): targets, each with runs, each
with latency_ms and histogram_ns ([low_ns, high_ns, count] per non-empty bucket of the same
log-linear layout), so every table and chart here is computed the same way for both."""
import html as _html
import math

PALETTE = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
           "#bcbd22", "#7f7f7f", "#393b79", "#637939"]


def server_of(name):
    """'twincache-mc' -> 'twincache', 'memcached/xmemcached-pool20' -> 'memcached'."""
    if "/" in name:
        return name.split("/", 1)[0]
    return name[:-3] if name.endswith("-mc") else name


def collect(c_json, j_jsons):
    """[{name, server, driver, client, protocol, t}] in display order: per server, the C rows
    first, then the Java clients."""
    rows = []
    for d, drv in [(c_json, "C")] + [(j, "JVM") for j in j_jsons]:
        if not d:
            continue
        for t in d["targets"]:
            cl = t.get("client") or {}
            rows.append({"name": t["name"], "server": server_of(t["name"]), "driver": drv,
                         "client": cl.get("describe") or "twinbench (C, own RESP/memcached encoder, epoll)",
                         "protocol": t.get("protocol", "?"), "t": t})
    order = []
    for r in rows:
        if r["server"] not in order:
            order.append(r["server"])
    return sorted(rows, key=lambda r: (order.index(r["server"]), r["driver"] != "C"))


def measured(t):
    return [r for r in t["runs"] if not r["warmup"] and not r.get("detail")]


def count_range(buckets, lo, hi):
    """Values in [lo, hi) by bucket low end (hist_count_range)."""
    return sum(c for b, _, c in buckets if lo <= b < hi)


def percentile(buckets, p, vmin, vmax):
    n = sum(c for _, _, c in buckets)
    if not n:
        return 0
    if p <= 0:
        return vmin
    if p >= 100:
        return vmax
    rank = max(1, math.ceil(p / 100.0 * n))
    acc = 0
    for _, hi, c in buckets:
        acc += c
        if acc >= rank:
            return min(max(hi, vmin), vmax)
    return vmax


def merged(runs):
    acc = {}
    for r in runs:
        for lo, hi, c in r["histogram_ns"]:
            k = (lo, hi)
            acc[k] = acc.get(k, 0) + c
    return [(lo, hi, c) for (lo, hi), c in sorted(acc.items())]


# ---- article tables ---------------------------------------------------------------------

def seed003_table(rows):
    labels = []
    for r in rows:
        for x in measured(r["t"]):
            if x["label"] not in labels:
                labels.append(x["label"])
    cols = [r for r in rows if measured(r["t"])]
    out = ["# seed003: elapsed microseconds (write + read) per thread count; C = twinbench, "
           "others = the JVM driver with the named client", "",
           "|  | " + " | ".join(f"{r['name']} ({'C' if r['driver'] == 'C' else 'JVM'})" for r in cols) + " |",
           "|---|" + "---|" * len(cols)]
    sums = [[0.0, 0] for _ in cols]
    for lab in labels:
        cells = []
        for i, r in enumerate(cols):
            x = {y["label"]: y for y in measured(r["t"])}.get(lab)
            if x is None:
                cells.append("n/a")
            else:
                us = x["elapsed_s"] * 1e6
                sums[i][0] += us
                sums[i][1] += 1
                cells.append(f"{us:.0f}")
        out.append(f"| {lab} | " + " | ".join(cells) + " |")
    out.append("| Ortalama | " + " | ".join(f"{s / k:.0f}" if k else "n/a" for s, k in sums) + " |")
    return "\n".join(out) + "\n"


def seed002_lines(rows):
    out = ["# seed002: tps per run (reads:writes 4:1, 64-byte values)", ""]
    for r in rows:
        out.append(f"{r['name']} ({'C' if r['driver'] == 'C' else 'JVM'}):")
        for x in measured(r["t"]):
            fail = x["errors"] + x["timeouts"] + x.get("connection_errors", 0)
            hm = x["hits"] + x["misses"]
            out.append(f"{x['label']},repeats={x['requests_per_connection']},valueLength=64,"
                       f"tps={x['ops_per_sec']:.0f},miss={x['misses']},fail={fail},hit={x['hits']},"
                       f"all={x['ops']},hitRate={(x['hits'] / hm if hm else 0):.2f}")
    labels = []
    for r in rows:
        for x in measured(r["t"]):
            if x["label"] not in labels:
                labels.append(x["label"])
    out += ["", "| tps | " + " | ".join(r["name"] for r in rows) + " |", "|---|" + "---|" * len(rows)]
    for lab in labels:
        cells = []
        for r in rows:
            x = {y["label"]: y for y in measured(r["t"])}.get(lab)
            cells.append(f"{x['ops_per_sec']:.0f}" if x else "n/a")
        out.append(f"| {lab} | " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


def _cell(v):
    s = f"{v:.3f}".rstrip("0").rstrip(".")
    return s.replace(".", ",")


def seed000_bucket_table(rows):
    cols = [(r, x) for r in rows for x in measured(r["t"])]
    out = ["Интервал, мс\t" + "\t".join(x["label"] for _, x in cols)]
    for row in range(41):
        hi = row * 25000
        lo = hi - 25000 if row else 0
        cells = []
        for _, x in cols:
            n = sum(c for _, _, c in x["histogram_ns"])
            v = 100.0 * count_range(x["histogram_ns"], lo, hi) / n if row and n else 0
            cells.append(_cell(math.floor(v * 100 + 0.5) / 100))
        out.append(_cell(row * 0.025) + "\t" + "\t".join(cells))
    return "\n".join(out) + "\n"


STEPS = [1e3, 2e3, 2.5e3, 5e3, 1e4, 1.2e4, 2.5e4, 5e4, 1e5, 2.5e5, 5e5, 1e6, 2.5e6, 5e6, 1e7, 2.5e7, 5e7,
         1e8, 2.5e8, 5e8, 1e9, 2.5e9, 5e9, 1e10]


def _nice(want):
    for s in STEPS:
        if s >= want:
            return int(s)
    return int(1e10)


def _fmt(v, fmt):
    return (fmt % v).replace(".", ",")


def _hrow(lo, hi, n, total):
    plus = min(25, int(math.floor(n / (total / 25.0) + 0.5))) if total else 0
    bar = ("+" * plus).ljust(26)
    return (f" |{bar}|{_fmt(lo / 1e6, '%9.2f')} ms -{_fmt(hi / 1e6, '%9.2f')} ms |{n:7d} "
            f"({_fmt(100.0 * n / total if total else 0, '%6.2f')}%)")


SEP = "-" * 65


def _hblock(b, vmin, vmax, lo, hi, dx):
    total = sum(c for _, _, c in b)
    out = ["Histogram data:", f"        elements: {total}",
           f"        min: {_fmt(vmin / 1e6, '%f')} ms, max: {_fmt(vmax / 1e6, '%f')} ms",
           f"        max x steps: 25, density per x step: {_fmt(total / 25.0, '%f')}", f"        dx: {dx}", SEP,
           _hrow(vmin, lo, count_range(b, 0, lo) if lo > vmin else 0, total), SEP]
    x = lo
    while x < hi:
        out.append(_hrow(x, x + dx, count_range(b, x, x + dx), total))
        x += dx
    out += [SEP, _hrow(hi, max(vmax, hi), count_range(b, hi, 1 << 62), total), SEP]
    return out


def console_hists(run):
    """The article's console histograms (bench/presets.c console_hists) from a run's JSON."""
    b = run["histogram_ns"]
    if not b:
        return ""
    vmin = round(run["latency_ms"]["min"] * 1e6)
    vmax = round(run["latency_ms"]["max"] * 1e6)
    p99 = percentile(b, 99, vmin, vmax)
    dx = _nice((p99 - vmin) / 20.0)
    upper = vmax if (vmax - vmin) // dx <= 20 else p99
    nb = (upper - vmin) // dx + 1
    out = _hblock(b, vmin, vmax, vmin, vmin + nb * dx, dx)
    a, z = percentile(b, 1, vmin, vmax), percentile(b, 90, vmin, vmax)
    zdx = _nice((z - a) / 16.0)
    zlo, zhi = a // zdx * zdx, (z + zdx - 1) // zdx * zdx
    if zhi <= zlo:
        zhi = zlo + zdx
    out.append("расшифровка диапазона")
    out += _hblock(b, vmin, vmax, max(zlo, vmin), zhi, zdx)
    return "\n".join(out) + "\n\n"


def seed000_histograms(rows):
    out = []
    for r in rows:
        out.append(f"{r['name']} ({'C' if r['driver'] == 'C' else 'JVM'})\n")
        for x in measured(r["t"]):
            thr, per = x["connections"], x["requests_per_connection"]
            out.append(f"1 thread - {per} requests" if thr == 1 else
                       f"{thr} threads - {per * thr} requests (by {per})")
            out.append(console_hists(x))
    return "\n".join(out)


def tables(preset, rows, histograms=True):
    if preset == "seed003":
        return seed003_table(rows)
    if preset == "seed002":
        return seed002_lines(rows)
    if preset == "seed000":
        s = "# seed000: % of requests per 0.025 ms bucket\n\n" + seed000_bucket_table(rows)
        return s + ("\n" + seed000_histograms(rows) if histograms else "")
    return ""


def summary(rows):
    out = [f"{'server':12} {'driver':5} {'target':30} {'ops/s':>10} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>9} "
           f"{'errors':>6} {'req/client-CPU-s':>16}"]
    for r in rows:
        t = r["t"]
        rs = measured(t)
        ops = sum(x["ops"] for x in rs)
        cpu = sum(x["client_cpu_s"] or 0 for x in rs)
        lat = t["latency_ms"]
        out.append(f"{r['server']:12} {r['driver']:5} {r['name'][:30]:30} {t['ops_per_sec']:10.0f} {lat['p50']:8.3f} "
                   f"{lat['p99']:8.3f} {lat['max']:9.3f} {t['errors'] + t['timeouts']:6d} "
                   f"{(ops / cpu if cpu > 0 else 0):16.0f}")
    return "\n".join(out) + "\n"


# ---- HTML -------------------------------------------------------------------------------

def _e(s):
    return _html.escape(str(s))


def _svg_lines(rows, title, cdf):
    W, H, L, B = 760, 300, 60, 40
    series = []
    for r in rows:
        b = merged(measured(r["t"]))
        n = sum(c for _, _, c in b)
        if n:
            series.append((r, b, n))
    if not series:
        return ""
    # x range: twice the highest p90 (a slow target's tail would flatten every other line)
    xmax = 2 * max(percentile(b, 90, 0, 1 << 62) for _, b, _ in series) or 1
    nb = 60
    w = xmax / nb
    pts_all = []
    ymax = 0.0
    for r, b, n in series:
        pts, acc = [], 0
        for i in range(nb):
            c = count_range(b, int(i * w), int((i + 1) * w))
            acc += c
            y = 100.0 * (acc if cdf else c) / n
            pts.append(((i + 0.5) * w, y))
            ymax = max(ymax, y)
        pts_all.append((r, pts))
    ymax = 100.0 if cdf else (ymax or 1) * 1.1
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H + 20 * len(series)}" role="img">',
         f'<title>{_e(title)}</title>',
         f'<line x1="{L}" y1="{H - B}" x2="{W - 10}" y2="{H - B}" stroke="#000"/>',
         f'<line x1="{L}" y1="10" x2="{L}" y2="{H - B}" stroke="#000"/>',
         f'<text x="{W // 2}" y="{H - 8}" text-anchor="middle" font-size="12">latency, ms (0 .. {xmax / 1e6:.3f})</text>',
         f'<text x="12" y="20" font-size="12">{"cumulative %" if cdf else "% per bin"}</text>']
    for k in range(5):
        x = L + (W - 10 - L) * k / 4
        o.append(f'<text x="{x:.0f}" y="{H - B + 14}" font-size="10" text-anchor="middle">{xmax * k / 4 / 1e6:.3f}</text>')
    for i, (r, pts) in enumerate(pts_all):
        col = PALETTE[i % len(PALETTE)]
        p = " ".join(f"{L + (W - 10 - L) * x / xmax:.1f},{(H - B) - (H - B - 10) * y / ymax:.1f}" for x, y in pts)
        o.append(f'<polyline fill="none" stroke="{col}" stroke-width="1.5" points="{p}"/>')
        o.append(f'<rect x="{L}" y="{H + 20 * i - 4}" width="12" height="8" fill="{col}"/>'
                 f'<text x="{L + 18}" y="{H + 20 * i + 4}" font-size="11">{_e(r["name"])} ({r["driver"]})</text>')
    o.append("</svg>")
    return "\n".join(o)


def _svg_bars(rows, title):
    labels = []
    for r in rows:
        for x in measured(r["t"]):
            if x["label"] not in labels and len(labels) < 12:
                labels.append(x["label"])
    if not labels:
        return ""
    W, H, L, B = 900, 320, 70, 60
    vals = {(r["name"], x["label"]): x["ops_per_sec"] for r in rows for x in measured(r["t"])}
    vmax = max(vals.values() or [1]) or 1
    gw = (W - L - 10) / len(labels)
    bw = max(1.0, gw * 0.8 / max(1, len(rows)))
    o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H + 20 * len(rows)}" role="img">',
         f'<title>{_e(title)}</title>',
         f'<line x1="{L}" y1="{H - B}" x2="{W - 10}" y2="{H - B}" stroke="#000"/>',
         f'<text x="12" y="20" font-size="12">ops/s (max {vmax:.0f})</text>']
    for gi, lab in enumerate(labels):
        o.append(f'<text x="{L + gi * gw + gw / 2:.0f}" y="{H - B + 14}" font-size="10" '
                 f'text-anchor="middle">{_e(lab[-18:])}</text>')
        for ri, r in enumerate(rows):
            v = vals.get((r["name"], lab))
            if v is None:
                continue
            h = (H - B - 20) * v / vmax
            o.append(f'<rect class="bar" x="{L + gi * gw + ri * bw:.1f}" y="{H - B - h:.1f}" width="{bw:.1f}" '
                     f'height="{h:.1f}" fill="{PALETTE[ri % len(PALETTE)]}"><title>{_e(r["name"])} {_e(lab)}: '
                     f'{v:.0f} ops/s</title></rect>')
    for i, r in enumerate(rows):
        o.append(f'<rect x="{L}" y="{H + 20 * i - 4}" width="12" height="8" fill="{PALETTE[i % len(PALETTE)]}"/>'
                 f'<text x="{L + 18}" y="{H + 20 * i + 4}" font-size="11">{_e(r["name"])} ({r["driver"]})</text>')
    o.append("</svg>")
    return "\n".join(o)


def html_report(path, preset, rows, c_json, j_jsons, memory=None, cost=None, notes=""):
    css = ("body{font-family:sans-serif;margin:20px;max-width:1400px}table{border-collapse:collapse;margin:8px 0}"
           "td,th{border:1px solid #bbb;padding:3px 7px;font-size:13px;text-align:right}"
           "td.l,th.l{text-align:left}pre{background:#f6f6f6;padding:8px;overflow:auto;font-size:12px}"
           "tr.c td{background:#eef4fb}")
    o = ["<!DOCTYPE html>", '<html><head><meta charset="utf-8"><title>twinbench report: C and JVM drivers</title>',
         f"<style>{css}</style></head><body>",
         f"<h1>twinbench {_e(preset)}: C driver and JVM clients</h1>",
         "<p>Per server, the C driver's row (twinbench) then each Java client's row (bench/java). "
         "Numbers from a shared 2-core VM: indicative only.</p>", f"<p>{_e(notes)}</p>" if notes else "",
         "<h2>Summary</h2><table><tr><th class=l>server</th><th class=l>driver</th><th class=l>target</th>"
         "<th>ops/s</th><th>mean ms</th><th>p50 ms</th><th>p99 ms</th><th>p99.9 ms</th><th>max ms</th>"
         "<th>hits</th><th>misses</th><th>errors</th><th>req/client CPU-s</th></tr>"]
    for r in rows:
        t = r["t"]
        rs = measured(t)
        ops = sum(x["ops"] for x in rs)
        cpu = sum(x["client_cpu_s"] or 0 for x in rs)
        lat = t["latency_ms"]
        o.append(f'<tr class="{"c" if r["driver"] == "C" else "j"}"><td class=l>{_e(r["server"])}</td>'
                 f'<td class=l>{r["driver"]}</td><td class=l>{_e(r["name"])}</td><td>{t["ops_per_sec"]:.0f}</td>'
                 f'<td>{lat["mean"]:.3f}</td><td>{lat["p50"]:.3f}</td><td>{lat["p99"]:.3f}</td>'
                 f'<td>{lat["p99.9"]:.3f}</td><td>{lat["max"]:.3f}</td><td>{t["hits"]}</td><td>{t["misses"]}</td>'
                 f'<td>{t["errors"] + t["timeouts"]}</td><td>{(ops / cpu if cpu > 0 else 0):.0f}</td></tr>')
    o.append("</table>")
    o.append("<h2>Clients: library versions and settings</h2><table><tr><th class=l>target</th>"
             "<th class=l>driver</th><th class=l>library, version, settings</th></tr>")
    for r in rows:
        o.append(f'<tr><td class=l>{_e(r["name"])}</td><td class=l>{r["driver"]}</td>'
                 f'<td class=l>{_e(r["client"])}</td></tr>')
    o.append("</table>")
    if memory:
        o.append("<h2>Memory per item</h2>" + memory_html(memory))
    if cost:
        o.append("<h2>Driver cost: requests per client CPU-second (P=1)</h2><pre>" + _e(cost) + "</pre>")
    o.append("<h2>Latency</h2>")
    o.append(_svg_lines(rows, "latency histogram, all measured runs", False))
    o.append(_svg_lines(rows, "latency CDF, all measured runs", True))
    o.append("<h2>Throughput per run</h2>")
    o.append(_svg_bars(rows, "ops/s per run"))
    o.append(f"<h2>Article format</h2><pre>{_e(tables(preset, rows, histograms=False))}</pre>")
    for d in [c_json] + list(j_jsons):
        if not d:
            continue
        o.append(f"<h3>{_e(d.get('tool'))}: {_e(d.get('command_line', ''))}</h3>"
                 f"<pre>{_e(d.get('settings', ''))}</pre><pre>{_e(d.get('text', ''))}</pre>")
    if c_json:
        m = c_json.get("machine", {})
        o.append("<h2>Machine</h2><pre>" + _e("\n".join(f"{k}: {v}" for k, v in m.items())) + "</pre>")
    o.append("</body></html>\n")
    with open(path, "w") as f:
        f.write("\n".join(o))


def memory_html(mem):
    """bench/memory.py --json: one table per item shape."""
    o = [f"<p>{_e(mem.get('method', ''))}</p>"]
    for shape in mem.get("shapes", {}).values():
        o.append(f"<h3>{_e(mem.get('items'))} items, {_e(shape['label'])}</h3><table><tr><th class=l>server</th>"
                 "<th>payload B/item</th><th>RSS growth B/item</th><th>overhead B/item</th><th>x payload</th>"
                 "<th>JVM heap after GC B/item</th></tr>")
        for r in shape["rows"]:
            hp = f"{r['heap_per_item']:.1f}" if "heap_per_item" in r else ""
            o.append(f'<tr><td class=l>{_e(r["name"])}</td><td>{r["payload_per_item"]:.1f}</td>'
                     f'<td>{r["rss_per_item"]:.1f}</td><td>{r["overhead"]:.1f}</td>'
                     f'<td>{r["rss_per_item"] / r["payload_per_item"]:.2f}</td><td>{hp}</td></tr>')
        o.append("</table>")
    return "".join(o)
