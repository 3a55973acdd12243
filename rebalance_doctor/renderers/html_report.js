// Sortable, filterable, paged tables for the HTML report. Rows come from the JSON block beside each table and are
// written with textContent only: log text never reaches the page as markup.
"use strict";
(function () {
  function compare(a, b) {
    if (a === b) return 0;
    if (a === null) return 1;
    if (b === null) return -1;
    return a < b ? -1 : 1;
  }

  function cell(value, className) {
    const td = document.createElement("td");
    if (className) td.className = className;
    if (Array.isArray(value)) {
      for (const line of value) {
        const div = document.createElement("div");
        div.textContent = line;
        td.appendChild(div);
      }
    } else {
      td.textContent = value;
    }
    return td;
  }

  function setUp(box) {
    const page = Number(box.dataset.page);
    const rows = JSON.parse(box.querySelector("script.rows").textContent);
    rows.forEach(function (row, index) {
      row.index = index;
      row.text = row.c.flat().join(" ").toLowerCase();
    });
    const table = box.querySelector("table");
    const headers = Array.from(table.tHead.rows[0].cells);
    const classes = headers.map(function (th) { return th.className; });
    const body = table.tBodies[0];
    const filter = box.querySelector("input.filter");
    const count = box.querySelector(".count");
    const previous = box.querySelector("button.previous");
    const next = box.querySelector("button.next");
    const state = { column: null, descending: false, page: 0, shown: rows };

    function draw() {
      const first = state.page * page;
      const slice = state.shown.slice(first, first + page);
      const fragment = document.createDocumentFragment();
      for (const row of slice) {
        const tr = document.createElement("tr");
        if (row.x) tr.className = row.x;
        row.c.forEach(function (value, column) { tr.appendChild(cell(value, classes[column])); });
        fragment.appendChild(tr);
      }
      body.replaceChildren(fragment);
      const total = state.shown.length;
      const of = total === rows.length ? "" : " (filtered from " + rows.length.toLocaleString("en") + ")";
      count.textContent = total === 0 ? "no rows match" + of
        : "rows " + (first + 1).toLocaleString("en") + "–" + (first + slice.length).toLocaleString("en") +
          " of " + total.toLocaleString("en") + of;
      previous.hidden = next.hidden = total <= page;
      previous.disabled = state.page === 0;
      next.disabled = first + page >= total;
    }

    function apply() {
      const query = filter.value.trim().toLowerCase();
      const shown = query ? rows.filter(function (row) { return row.text.includes(query); }) : rows.slice();
      if (state.column !== null) {
        const column = state.column;
        const direction = state.descending ? -1 : 1;
        shown.sort(function (a, b) {
          const x = a.k[column], y = b.k[column];
          if (x === null || y === null) return compare(x, y) || a.index - b.index;  // empty cells last either way
          return compare(x, y) * direction || a.index - b.index;
        });
      }
      state.shown = shown;
      state.page = 0;
      draw();
    }

    headers.forEach(function (th, column) {
      th.querySelector("button.sort").addEventListener("click", function () {
        state.descending = state.column === column ? !state.descending : false;
        state.column = column;
        headers.forEach(function (other) { other.setAttribute("aria-sort", "none"); });
        th.setAttribute("aria-sort", state.descending ? "descending" : "ascending");
        apply();
      });
    });
    filter.addEventListener("input", apply);
    previous.addEventListener("click", function () { state.page -= 1; draw(); });
    next.addEventListener("click", function () { state.page += 1; draw(); });
    draw();
  }

  document.querySelectorAll("div.data-table").forEach(setUp);
})();
