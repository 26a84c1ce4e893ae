#!/usr/bin/python3
"""svg_report.py FILE.svg - what a reader of one `surge plot` figure sees,
from the SVG's text elements, one fact a line (tab-separated), for
tests/e2e/test_plot.sh to compare:

  title     the chart's title (its largest text)
  ylabel    the vertical texts at the left (the y axis' label; y2 at the right)
  xlabel    the text under the x ticks (the x axis' label)
  footer    each metadata line (surge ..., command: ..., ports: ...)
  mark      each event's text on the chart (vertical, inside the plot)
  key       each legend entry (series and event kinds)
  ticks     the tick texts of each axis, comma-separated (x, y, y2)
  smallest  the smallest font size, in px of the 1200-px-wide figure
  raw       texts outside the footer that look like raw JSON field names
            (a word_with_underscores) or numbers in exponent form (1e+06)
"""
import re
import sys

svg = open(sys.argv[1]).read()
width = float(re.search(r'viewBox="0 0 ([\d.]+) ', svg).group(1))
texts = []   # (size, x, y, rotated, anchor, text)
for m in re.finditer(r'<g transform="translate\(([\d.]+),([\d.]+)\)( rotate\([-\d]+\))?"[^>]*?'
                     r'font-size="([\d.]+)"[^>]*?text-anchor="(\w+)"[^>]*>\s*<text>([^<]*)</text>', svg):
    x, y, rot, size, anchor, text = m.groups()
    text = text.replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", '"').replace("&apos;", "'")
    texts.append((float(size) * 1200 / width, float(x), float(y), bool(rot), anchor, text))
if len(texts) != svg.count("<text"):
    sys.exit("svg_report.py: %d texts, %d understood" % (svg.count("<text"), len(texts)))

# the plot's frame: the border path gnuplot draws first, M x0,y0 L x0,y1 ...
titles = [t for t in texts if t[0] == max(s for s, *_ in texts)]
out = []
for t in titles:
    out.append(("title", t[5]))
footer = [t for t in texts if re.match(r"(surge |command: |ports: )", t[5]) and t[4] == "start"]
body = [t for t in texts if t not in titles and t not in footer]
xs_tick = [t for t in body if not t[3] and t[4] == "middle"]
# x ticks sit on one line just under the plot, the x label under them
rows = sorted({round(t[2]) for t in xs_tick})
xlabel_y = rows[-1] if len(rows) > 1 else None
for t in body:
    if t[3] and t[4] == "middle":
        out.append(("ylabel" if t[1] < width / 2 else "y2label", t[5]))
    elif t[3]:
        out.append(("mark", t[5]))
    elif t[4] == "middle" and xlabel_y is not None and round(t[2]) == xlabel_y:
        out.append(("xlabel", t[5]))
xt = [t[5] for t in xs_tick if xlabel_y is None or round(t[2]) != xlabel_y]
yt = [t[5] for t in body if not t[3] and t[4] == "end" and t[1] < width * 0.2]
y2t = [t[5] for t in body if not t[3] and t[4] == "start" and t[1] > width * 0.5 and t not in footer]
keys = [t[5] for t in body if not t[3] and t[4] == "end" and t[1] >= width * 0.2]
for k in keys:
    out.append(("key", k))
out.append(("ticks x", ", ".join(xt)))
out.append(("ticks y", ", ".join(yt)))
if y2t:
    out.append(("ticks y2", ", ".join(y2t)))
for t in footer:
    out.append(("footer", t[5]))
out.append(("smallest", "%g" % min(s for s, *_ in texts)))
raw = [t[5] for t in body if re.search(r"\b[a-z][a-z0-9]*_[a-z0-9_]+\b|\d[eE][+-]?\d", t[5])]
out.append(("raw", ", ".join(raw) if raw else "none"))
for k, v in out:
    print("%s\t%s" % (k, v))
