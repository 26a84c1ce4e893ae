#!/usr/bin/python3
"""svg_series.py FILE.svg - prints each gnuplot series of an SVG as
"title<TAB>points": linespoints count their point marks (less the one in the
key), steps count the path's corners ((coordinates - 2 key + 1) / 2). A key
entry of its own (gnuplot's keyentry: the event marks' legend) is no series:
left out."""
import re
import sys

svg = open(sys.argv[1]).read()
for part in re.split(r'<g id="gnuplot_plot_\w+"', svg)[1:]:
    title = re.search(r"<title>([^<]*)</title>", part).group(1)
    if re.fullmatch(r"gnuplot_plot_\d+", title):
        continue
    marks = part.count("#gpPt")
    if marks:
        print("%s\t%d" % (title, marks - 1))
    else:
        path = re.search(r"<path[^>]*d='([^']*)'", part)
        coords = len(re.findall(r"[ML][\d.]+,[\d.]+", path.group(1))) if path else 0
        print("%s\t%d" % (title, (coords - 1) // 2))
