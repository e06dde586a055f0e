// The applications table: data from window.MOSAIC_APPLICATIONS, sorted and filtered here.
// data/applications.js holds the groups with the most runs; "load more rows" adds the next
// data file (data.files, by <script src>: a page opened as a file may not fetch). Only the
// first PAGE matching rows become DOM rows: 250,000 rows stay fast.
(function () {
  "use strict";
  const PAGE = 500;
  const data = window.MOSAIC_APPLICATIONS;
  let loaded = 0;  // data files added after the first
  const more = document.getElementById("more");
  data.more = (rows) => { for (const row of rows) data.rows.push(row); loaded += 1; render(); };
  more.addEventListener("click", () => {
    const script = document.createElement("script");
    script.src = "data/" + data.files[loaded];
    more.disabled = true;
    document.body.appendChild(script);
  });
  const COL = {};
  data.columns.forEach((name, i) => { COL[name] = i; });
  const HEADERS = [["application", "application"], ["uid", "user id"], ["runs", "runs"],
                   ["bytes", "bytes (all runs)"], ["stability", "stability"], ["period_seconds", "period"],
                   ["labels", "labels (share of runs)"]];
  const table = document.getElementById("apps");
  const body = table.querySelector("tbody");
  const shown = document.getElementById("shown");
  const byName = document.getElementById("filter-name");
  const byLabel = document.getElementById("filter-label");
  const minShare = document.getElementById("filter-share");
  const minRuns = document.getElementById("filter-runs");
  let sortKey = "runs", descending = true;

  data.labels.forEach((label, i) => {
    const option = document.createElement("option");
    option.value = String(i);
    option.textContent = label.replace(/_/g, " ");
    byLabel.appendChild(option);
  });
  const head = document.createElement("tr");
  for (const [key, text] of HEADERS) {
    const th = document.createElement("th");
    th.textContent = text;
    th.dataset.key = key;
    if (key !== "labels") th.addEventListener("click", () => sortBy(key));
    head.appendChild(th);
  }
  table.querySelector("thead").appendChild(head);

  function human(value) {
    const units = [[1e15, "PB"], [1e12, "TB"], [1e9, "GB"], [1e6, "MB"], [1e3, "kB"]];
    // a no-break space: a narrow column never splits a number from its unit
    for (const [scale, unit] of units) if (value >= scale) return (value / scale).toFixed(1) + "\u00a0" + unit;
    return value.toFixed(0) + "\u00a0B";
  }
  function share(row, label) {
    const pairs = row[COL.labels];
    for (let i = 0; i < pairs.length; i += 2) if (pairs[i] === label) return pairs[i + 1];
    return 0;
  }
  function sortBy(key) {
    descending = key === sortKey ? !descending : key !== "application";
    sortKey = key;
    render();
  }
  function compare(a, b) {
    const x = a[COL[sortKey]], y = b[COL[sortKey]];
    if (x === y) return 0;
    if (x === null) return 1;  // missing values last, either way
    if (y === null) return -1;
    const order = x < y ? -1 : 1;
    return descending ? -order : order;
  }
  function cell(tr, text, numeric) {
    const td = document.createElement("td");
    if (numeric) td.className = "num";
    if (text instanceof Node) td.appendChild(text); else td.textContent = text;
    tr.appendChild(td);
  }
  // What the table shows, in words: "Showing the first 500 of 5,000 loaded applications
  // (loaded: ...)", filtered "37 of 5,000 loaded applications match (...)".
  function summary(matching, filtered) {
    const count = (n) => n.toLocaleString("en");
    const loaded = data.rows.length, partial = loaded < data.total;
    const first = matching > PAGE ? "the first " + PAGE : "";  // the DOM holds PAGE rows at most
    const noun = count(loaded) + (partial ? " loaded applications" : " applications");
    const text = filtered
      ? count(matching) + " of " + noun + " match" + (first ? "; showing " + first : "")
      : (first ? "Showing " + first + " of " : "") + noun;
    return text + (partial ? " (loaded: those with the most runs, of " + count(data.total) +
      " in all; \u201cload more rows\u201d below the table adds more)." : ".");
  }
  function render() {
    const name = byName.value.trim().toLowerCase();
    const label = byLabel.value === "" ? -1 : Number(byLabel.value);
    const least = Number(minShare.value) || 0;
    const runs = Number(minRuns.value) || 0;
    const rows = data.rows.filter((row) =>
      (!name || row[COL.application].toLowerCase().includes(name)) &&
      row[COL.runs] >= runs && (label < 0 || (share(row, label) >= least && share(row, label) > 0)));
    rows.sort(compare);
    for (const th of head.children) {
      th.setAttribute("aria-sort", th.dataset.key === sortKey ? (descending ? "descending" : "ascending") : "none");
    }
    body.replaceChildren();
    for (const row of rows.slice(0, PAGE)) {
      const tr = document.createElement("tr");
      let title = document.createTextNode(row[COL.application]);
      if (row[COL.page]) {
        title = document.createDocumentFragment();
        const link = document.createElement("a"), mark = document.createElement("span");
        link.href = row[COL.page];
        link.textContent = row[COL.application];
        mark.className = "has-page";
        mark.textContent = "page";
        title.append(link, " ", mark);
      }
      cell(tr, title);
      cell(tr, String(row[COL.uid]), true);
      cell(tr, row[COL.runs].toLocaleString("en"), true);
      cell(tr, human(row[COL.bytes]), true);
      cell(tr, row[COL.stability] === null ? "-" : Math.round(100 * row[COL.stability]) + "\u00a0%", true);
      cell(tr, row[COL.period] === null ? "-" : row[COL.period]);
      const pairs = row[COL.labels], parts = [];
      for (let i = 0; i < pairs.length; i += 2) {
        parts.push(data.labels[pairs[i]].replace(/_/g, " ") + " " + pairs[i + 1] + "%");
      }
      cell(tr, parts.join(", "));
      body.appendChild(tr);
    }
    shown.textContent = summary(rows.length, name !== "" || label >= 0 || runs > 0);
    more.hidden = loaded >= data.files.length;
    more.disabled = false;
  }
  for (const input of [byName, byLabel, minShare, minRuns]) input.addEventListener("input", render);
  render();
})();
