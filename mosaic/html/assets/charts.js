// Draws the page's charts (the JSON block #mosaic-charts) with uPlot:
// drag across a chart to zoom in on time, double-click to zoom out, hover for the values.
(function () {
  "use strict";
  const block = document.getElementById("mosaic-charts");
  if (!block) return;
  const PREFIXES = [[1e15, "P"], [1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];
  function human(value, unit) {
    if (value == null || !isFinite(value)) return "-";
    const size = Math.abs(value);
    for (const [scale, prefix] of PREFIXES) {
      if (size >= scale) return +(value / scale).toPrecision(3) + " " + prefix + unit;
    }
    return +value.toPrecision(3) + (unit ? " " + unit : "");
  }
  function tick(value, unit, floor) {  // uPlot passes null for the unlabelled ticks of a log axis
    return value == null || value < floor ? "" : human(value, unit);
  }
  function paths(style) {
    if (style === "steps") return uPlot.paths.stepped({ align: 1 });
    if (style === "bars") return uPlot.paths.bars({ size: [0.9, 60], align: 1 });
    return undefined;
  }
  for (const spec of JSON.parse(block.textContent)) {
    const element = document.getElementById(spec.id);
    if (!element) continue;
    const unit = spec.unit || "";
    const series = [spec.time ? { label: spec.xlabel } : { label: spec.xlabel, value: (u, v) => human(v, "") }];
    const data = [spec.x];
    for (const one of spec.series) {
      const dots = one.style === "points";  // a scatter: points, no line between them
      const plain = dots || one.style === "plain";  // no fill under it
      series.push({
        label: one.label, stroke: one.color, fill: plain ? undefined : one.color + "40", width: plain ? 1.5 : 1,
        paths: dots ? () => null : paths(spec.style), value: (u, v) => human(v, unit),
        points: dots ? { show: true, size: 5, fill: one.color } : plain ? { show: false } : undefined,
      });
      data.push(one.values);
    }
    for (const line of spec.lines || []) {
      series.push({ label: line.label, stroke: "#cc3311", width: 1, dash: [6, 4], points: { show: false },
                    value: (u, v) => human(v, unit) });
      data.push(spec.x.map(() => line.value));
    }
    const opts = {
      title: spec.title, width: Math.max(element.clientWidth, 320), height: 230, series: series,
      scales: { x: spec.xrange ? { time: !!spec.time, range: () => spec.xrange }
                               : { time: !!spec.time, distr: spec.logx ? 3 : 1 },
                y: spec.asinhy ? { distr: 4, asinh: 1, range: (u, low, high) => [0, Math.max(high, 1)] } : {} },
      axes: [spec.time ? { label: spec.xlabel } : { label: spec.xlabel, values: (u, vals) => vals.map((v) => tick(v, "", -Infinity)) },
             // counts and bytes are never negative: no "-1" tick below an asinh axis's 0
             { label: spec.ylabel, size: 70, values: (u, vals) => vals.map((v) => tick(v, unit, spec.asinhy ? 0 : -Infinity)) }],
      cursor: { drag: { x: true, y: false } },
    };
    new uPlot(opts, data, element);
  }
})();
