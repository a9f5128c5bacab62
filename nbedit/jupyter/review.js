// The review widget's browser side (anywidget ESM, no build step): draws the plan's rows.
// State it reads: doc (the rows), excluded, view_mode, review_state, status_message, detail_html,
// replan_available. What it sends: {action: apply|reject|replan} and {action: expand} for a gap's lines.
const KINDS = { c: ["c", " "], r: ["r", "-"], a: ["a", "+"] };

function esc(text) {
  return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

function body(text) {
  if (typeof text === "string") return esc(text);
  return text.map(([piece, changed]) => (changed ? `<span class="w">${esc(piece)}</span>` : esc(piece))).join("");
}

function num(value) {
  return value === null || value === undefined ? "" : String(value);
}

function cellLabel(row) {
  const cell = row[3];
  const change = row[4];
  const parts = [`cell ${esc(cell.index)}`, esc(cell.type)];
  if (cell.id) parts.push(`id ${esc(cell.id)}`);
  if (cell.readonly) parts.push("read-only");
  let badge = "";
  if (change === "retyped") badge = `<span class="nb-badge nb-cellchange">retyped from ${esc(row[5])}</span>`;
  else if (change) badge = `<span class="nb-badge nb-cellchange">${esc(change)}</span>`;
  const marker = change === "deleted" || change === "replaced" ? "−" : change ? "+" : "▣";
  return `<span class="nb-cellmark" aria-hidden="true">${marker}</span> ${parts.join(" · ")} ${badge}`;
}

function unifiedRow(row, columns) {
  if (row[0] === "m") {
    const css = row[4] === "deleted" || row[4] === "replaced" ? "m mr" : row[4] ? "m ma" : "m";
    return `<tr class="${css}"><td colspan="${columns}">${cellLabel(row)}</td></tr>`;
  }
  const [css, marker] = KINDS[row[0]];
  return `<tr class="${css}"><td class="n">${num(row[1])}</td><td class="n">${num(row[2])}</td><td class="m">${marker}</td><td class="t">${body(row[3])}</td></tr>`;
}

function half(row, side) {
  if (!row) return `<td class="n e"></td><td class="m e"></td><td class="t e"></td>`;
  const [css, marker] = KINDS[row[0]];
  const line = side === "old" ? row[1] : row[2];
  return `<td class="n ${css}">${num(line)}</td><td class="m ${css}">${marker}</td><td class="t ${css}">${body(row[3])}</td>`;
}

function splitRows(rows) {
  const out = [];
  let index = 0;
  while (index < rows.length) {
    const row = rows[index];
    if (row[0] === "m") {
      // a retyped cell is a deleted marker and an inserted one: one header row says both
      out.push(unifiedRow(row, 6));
      index += 1;
    } else if (row[0] === "c") {
      out.push(`<tr class="c">${half(row, "old")}${half(row, "new")}</tr>`);
      index += 1;
    } else {
      const removed = [];
      const added = [];
      while (index < rows.length && rows[index][0] === "r") removed.push(rows[index++]);
      while (index < rows.length && rows[index][0] === "a") added.push(rows[index++]);
      for (let pair = 0; pair < Math.max(removed.length, added.length); pair++) {
        out.push(`<tr class="s">${half(removed[pair], "old")}${half(added[pair], "new")}</tr>`);
      }
    }
  }
  return out.join("");
}

function comparison(text, marked) {
  // the lines expected vs in the file; lines that differ from their partner only in whitespace
  // (marked by the kernel) show their spaces as "·" and tabs as "→"
  const lines = text.split("\n");
  const ws = new Set(marked || []);
  return lines
    .map((line, index) => {
      if (!ws.has(index)) return esc(line);
      const shown = line.slice(1).replace(/ /g, "·").replace(/\t/g, "→");
      return `${esc(line[0])}<span class="nb-ws" title="· is a space, → a tab">${esc(shown)}</span>`;
    })
    .join("\n");
}

function whyHere(hunk) {
  // why the matcher chose this place (engine/explain.py): a plain summary, the score, the rows
  const why = hunk.why;
  if (!why) return "";
  const cell = (label, text) =>
    text.includes("\n") || label.startsWith("expected")
      ? `<pre class="nb-why-pre">${label.startsWith("expected") ? comparison(text, why.ws) : esc(text)}</pre>`
      : esc(text);
  const rows = [["score", why.score], ...why.rows]
    .map(([label, text]) => `<tr><th scope="row">${esc(label)}</th><td>${cell(label, text)}</td></tr>`)
    .join("");
  return `<details class="nb-why"><summary>Why here?</summary><p class="nb-why-summary">${esc(why.summary)}</p><table class="nb-why-table">${rows}</table></details>`;
}

function tierBadges(file, hunk) {
  // the file's header says "all exact" once: its hunks do not repeat it
  const pieces = [];
  if (!hunk.exact) pieces.push(`<span class="nb-badge" title="${esc(hunk.why_tier)}">⚠ ${esc(hunk.tier)}</span>`);
  else if (file.inexact) pieces.push(`<span class="nb-badge nb-ok" title="found verbatim (score 1.00)">exact</span>`);
  if (hunk.offset) pieces.push(`<span class="nb-badge" title="the hunk's context was found at a different line">${esc(hunk.offset)}</span>`);
  return pieces.join(" ");
}

// ---------------------------------------------------------------- notebooks, cell by cell

const CELL_STATES = { edited: "edited", inserted: "inserted", deleted: "deleted", retyped: "retyped" };

function cellName(cell) {
  return cell.index === "new" ? "new cell" : `cell ${cell.index}`;
}

function cellToggles(file, entry, excluded, frozen, owners) {
  return (entry.hunks || [])
    .map((index) => {
      const key = `${file.index}:${index}`;
      const others = (owners.get(index) || []).filter((name) => name !== cellName(entry.cell));
      const also = others.length ? ` (also ${others.join(", ")})` : "";
      const title = others.length
        ? `this hunk also changes ${others.join(", ")}: it is included or left out with them`
        : "include this change when applying";
      return (
        `<label class="nbedit-hunk-toggle" title="${esc(title)}"><input type="checkbox" data-key="${key}"${excluded.has(key) ? "" : " checked"}${frozen ? " disabled" : ""} ` +
        `aria-label="include hunk ${index + 1} of ${esc(file.path)}${esc(also)}"> hunk ${index + 1}${esc(also)}</label>`
      );
    })
    .join(" ");
}

function cellHeader(file, entry, position, columns, excluded, frozen, owners, open) {
  const cell = entry.cell;
  const parts = [esc(cellName(cell)), esc(cell.type)];
  if (cell.id) parts.push(`id ${esc(cell.id)}`);
  const badges = [];
  if (entry.state === "retyped") badges.push(`<span class="nb-badge nb-cellchange">retyped ${esc(entry.from)} → ${esc(cell.type)}</span>`);
  else if (CELL_STATES[entry.state]) badges.push(`<span class="nb-badge nb-cellchange nb-${entry.state}">${CELL_STATES[entry.state]}</span>`);
  if (entry.outputs === "kept") badges.push(`<span class="nb-badge nb-ok" title="outputs and execution count stay as they are">outputs kept</span>`);
  if (entry.cleared) {
    const count = entry.cleared.length;
    const what = count ? `: ${entry.cleared.join(", ")}` : " (it has none)";
    badges.push(`<span class="nb-badge nb-warn" title="--clear-outputs">clears ${count} output${count === 1 ? "" : "s"}${esc(what)}</span>`);
  }
  const hunks = (entry.hunks || []).map((index) => file.hunks[index]).filter(Boolean);
  for (const hunk of hunks) badges.push(tierBadges(file, hunk));
  const why = hunks.map(whyHere).join("");
  const toggles = cellToggles(file, entry, excluded, frozen, owners);
  const marker = entry.state === "deleted" ? "−" : entry.state === "inserted" ? "+" : entry.state === "same" ? "▣" : "±";
  let lead = `<span class="nb-cellmark" aria-hidden="true">${marker}</span>`;
  if (entry.state === "same") {
    const lines = `${entry.lines} line${entry.lines === 1 ? "" : "s"}`;
    lead = `<button type="button" class="nb-cell-open" data-file="${file.index}" data-cell="${esc(cell.index)}" aria-expanded="${open}" aria-label="${open ? "hide" : "show"} ${esc(cellName(cell))}, unchanged, ${lines}">${open ? "▾" : "▸"}</button>`;
    badges.unshift(`<span class="nb-muted">unchanged · ${lines}</span>`);
  }
  const css = entry.state === "deleted" ? "m mr" : entry.state === "inserted" ? "m ma" : "m";
  return `<tr class="${css} nb-cellhead"><td colspan="${columns}">${toggles}${toggles ? " " : ""}${lead} ${parts.join(" · ")} ${badges.join(" ")}${why}</td></tr>`;
}

function drawRows(rows, split, columns) {
  return split ? splitRows(rows) : rows.map((row) => unifiedRow(row, columns)).join("");
}

function cellRows(file, entry, position, split, columns, cellLines) {
  // rows within one cell (numbered within the cell); ["g", count, old, new] is an unchanged run
  const out = [];
  let run = [];
  const flush = () => {
    if (run.length) out.push(drawRows(run, split, columns));
    run = [];
  };
  entry.rows.forEach((row, index) => {
    if (row[0] !== "g") {
      run.push(row);
      return;
    }
    const [, count, oldLine, newLine] = row;
    const lines = cellLines.get(`${file.index}:${entry.cell.index}`);
    if (lines) {
      for (let offset = 0; offset < count; offset++) run.push(["c", oldLine + offset, newLine + offset, lines[oldLine - 1 + offset] || ""]);
      return;
    }
    flush();
    const word = count === 1 ? "line" : "lines";
    out.push(
      `<tr class="g"><td colspan="${columns}"><button type="button" class="nb-cell-gap" data-file="${file.index}" data-cell="${esc(entry.cell.index)}" aria-label="show ${count} unchanged ${word} of ${esc(cellName(entry.cell))}">⋯ ${count} unchanged ${word}</button></td></tr>`,
    );
  });
  flush();
  if (entry.more) out.push(`<tr class="g"><td colspan="${columns}">⋯ ${entry.more} more lines not shown</td></tr>`);
  return out.join("");
}

function notebookTable(file, excluded, frozen, split, cellLines, openCells, openRuns) {
  const columns = split ? 6 : 4;
  const owners = new Map(); // hunk index -> names of the cells it changes
  for (const entry of file.cells) {
    for (const index of entry.hunks || []) {
      if (!owners.has(index)) owners.set(index, []);
      owners.get(index).push(cellName(entry.cell));
    }
  }
  const out = [];
  let position = 0;
  while (position < file.cells.length) {
    const entry = file.cells[position];
    if (entry.state === "same" && !(entry.hunks || []).length) {
      // a run of unchanged cells: one row; opened, one header per cell
      let end = position;
      while (end < file.cells.length && file.cells[end].state === "same" && !(file.cells[end].hunks || []).length) end++;
      const runKey = `${file.index}:${position}`;
      if (end - position > 2 && !openRuns.has(runKey)) {
        const count = end - position;
        out.push(
          `<tbody class="nb-block nb-same-run"><tr class="g"><td colspan="${columns}"><button type="button" class="nb-cells-run" data-run="${runKey}" aria-label="show the headers of ${count} unchanged cells">⋯ ${count} unchanged cells (${esc(cellName(file.cells[position].cell))} to ${esc(cellName(file.cells[end - 1].cell))})</button></td></tr></tbody>`,
        );
      } else {
        for (let index = position; index < end; index++) out.push(sameCell(file, file.cells[index], index, columns, split, excluded, frozen, owners, cellLines, openCells));
      }
      position = end;
      continue;
    }
    if (entry.state === "same") {
      out.push(sameCell(file, entry, position, columns, split, excluded, frozen, owners, cellLines, openCells));
    } else {
      const left = (entry.hunks || []).length && entry.hunks.every((index) => excluded.has(`${file.index}:${index}`));
      out.push(`<tbody class="nb-block nb-cell nb-cell-${entry.state}${left ? " nb-excluded" : ""}">`);
      out.push(cellHeader(file, entry, position, columns, excluded, frozen, owners, true));
      out.push(cellRows(file, entry, position, split, columns, cellLines));
      out.push("</tbody>");
    }
    position += 1;
  }
  const columnsSpec = split ? `<colgroup>${'<col class="cn"><col class="cm"><col class="ct">'.repeat(2)}</colgroup>` : "";
  return `<div class="nb-scroll"><table class="nb-diff nb-cells${split ? " nb-split" : ""}">${columnsSpec}${out.join("")}</table></div>`;
}

function sameCell(file, entry, position, columns, split, excluded, frozen, owners, cellLines, openCells) {
  const key = `${file.index}:${entry.cell.index}`;
  const open = openCells.has(key);
  const lines = cellLines.get(key);
  let rows = "";
  if (open && lines) rows = drawRows(lines.map((text, offset) => ["c", offset + 1, offset + 1, text]), split, columns);
  else if (open) rows = `<tr class="g"><td colspan="${columns}">loading…</td></tr>`;
  return `<tbody class="nb-block nb-cell nb-cell-same">${cellHeader(file, entry, position, columns, excluded, frozen, owners, open)}${rows}</tbody>`;
}

function hunkHeader(file, section, columns, excluded, frozen) {
  const pieces = [];
  for (const hunk of section.hunks) {
    const key = `${file.index}:${hunk.index}`;
    const checked = excluded.has(key) ? "" : " checked";
    const disabled = frozen ? " disabled" : "";
    pieces.push(
      `<label class="nbedit-hunk-toggle" title="include hunk ${hunk.index + 1} when applying">` +
        `<input type="checkbox" data-key="${key}"${checked}${disabled} aria-label="include hunk ${hunk.index + 1} of ${esc(file.path)}"> hunk ${hunk.index + 1}</label>`,
    );
  }
  pieces.push(`<span class="nb-range">${esc(section.range)}</span>`);
  if (!file.notebook) {
    // (a notebook's rows draw the cells themselves)
    const cells = new Set(section.hunks.map((hunk) => hunk.cell).filter(Boolean));
    for (const cell of cells) pieces.push(`<span class="nb-badge nb-cell">${esc(cell)}</span>`);
  }
  for (const hunk of section.hunks) pieces.push(tierBadges(file, hunk));
  const why = section.hunks.map(whyHere).join("");
  return `<tr class="h"><td colspan="${columns}">${pieces.join(" ")}${why}</td></tr>`;
}

function gapRow(file, section, position, columns) {
  const [count, oldLine, newLine] = section.gap;
  const lines = count === 1 ? "line" : "lines";
  const cells = section.cells ? `${section.cells} unchanged ${section.cells === 1 ? "cell" : "cells"}, ` : "";
  return `<tr class="g"><td colspan="${columns}"><button type="button" class="nb-expand" data-file="${file.index}" data-section="${position}" data-old="${oldLine}" data-new="${newLine}" data-count="${count}" aria-label="show ${count} unchanged ${lines}" title="show these lines">⋯ ${cells}${count} unchanged ${lines}</button></td></tr>`;
}

function expandedRows(file, section, lines, split) {
  const [, oldLine, newLine] = section.gap;
  const rows = lines.map((text, offset) => ["c", oldLine + offset, newLine + offset, text]);
  return split ? splitRows(rows) : rows.map((row) => unifiedRow(row, 4)).join("");
}

function fileTable(file, excluded, frozen, split, expanded) {
  const columns = split ? 6 : 4;
  const out = [];
  file.sections.forEach((section, position) => {
    if (section.gap) {
      const lines = expanded.get(`${file.index}:${position}`);
      out.push(lines ? expandedRows(file, section, lines, split) : gapRow(file, section, position, columns));
      return;
    }
    const left = section.hunks.length && section.hunks.every((hunk) => excluded.has(`${file.index}:${hunk.index}`));
    out.push(`<tbody class="nb-block${left ? " nb-excluded" : ""}">`);
    if (section.hunks.length) out.push(hunkHeader(file, section, columns, excluded, frozen));
    out.push(split ? splitRows(section.rows) : section.rows.map((row) => unifiedRow(row, columns)).join(""));
    if (section.more) out.push(`<tr class="g"><td colspan="${columns}">⋯ ${esc(section.more)}</td></tr>`);
    out.push("</tbody>");
  });
  if (!out.length) return file.already_applied ? "" : `<div class="nb-note">no line changes</div>`;
  // a fixed layout takes its widths from the first row (a full-width header): name them up front
  const columnsSpec = split ? `<colgroup>${'<col class="cn"><col class="cm"><col class="ct">'.repeat(2)}</colgroup>` : "";
  return `<div class="nb-scroll"><table class="nb-diff${split ? " nb-split" : ""}">${columnsSpec}${out.join("")}</table></div>`;
}

function fileSelect(file, frozen) {
  if (file.whole || file.hunk_count < 2) return "";
  const off = frozen ? " disabled" : "";
  return (
    `<span class="nb-tools" role="group" aria-label="select the parts of ${esc(file.path)}">` +
    `<button type="button" class="nb-small nb-select-all" data-file="${file.index}"${off} aria-label="select every part of ${esc(file.path)}">all</button>` +
    `<button type="button" class="nb-small nb-select-none" data-file="${file.index}"${off} aria-label="select no part of ${esc(file.path)}">none</button></span>`
  );
}

function fileBox(file, excluded, frozen, split, collapsed, expanded, cellView) {
  const open = !collapsed.has(file.index);
  const badges = [];
  if (file.notebook) badges.push(`<span class="nb-badge nb-cell">notebook</span>`);
  for (const badge of file.badges || []) badges.push(`<span class="nb-badge nb-cellchange">${esc(badge)}</span>`);
  if (file.tiers) {
    const kind = file.inexact ? "" : " nb-ok";
    badges.push(`<span class="nb-badge${kind}">${file.inexact ? "⚠ " : ""}${esc(file.tiers)}</span>`);
  }
  let include = "";
  if (file.whole) {
    const key = `${file.index}:-1`;
    include = `<label class="nbedit-hunk-toggle nb-file-include"><input type="checkbox" data-key="${key}"${excluded.has(key) ? "" : " checked"}${frozen ? " disabled" : ""} aria-label="include ${esc(file.path)}"> include</label>`;
  }
  const head =
    `<div class="nb-file-head">` +
    `<button type="button" class="nb-collapse" data-file="${file.index}" aria-expanded="${open}" aria-label="${open ? "collapse" : "expand"} ${esc(file.path)}">${open ? "▾" : "▸"}</button>` +
    `<span class="nb-path">${esc(file.path)}</span>` +
    `<span class="nb-plus" aria-label="${file.added} lines added">+${file.added}</span><span class="nb-minus" aria-label="${file.removed} lines removed">−${file.removed}</span>` +
    `<span class="nb-status">${esc(file.status)}</span>${badges.join("")}${include}${fileSelect(file, frozen)}</div>`;
  if (!open) return `<div class="nb-file nb-collapsed">${head}</div>`;
  const notes = file.notes.map((note) => `<div class="nb-note">${esc(note)}</div>`).join("");
  if (file.cells) {
    const { cellLines, openCells, openRuns } = cellView;
    return `<div class="nb-file">${head}${notes}${notebookTable(file, excluded, frozen, split, cellLines, openCells, openRuns)}</div>`;
  }
  const outputs = file.outputs
    ? `<div class="nb-note nb-outputs">outputs ${file.outputs === "cleared" ? "of edited code cells are cleared (--clear-outputs)" : "are kept"}</div>`
    : "";
  return `<div class="nb-file">${head}${notes}${outputs}${fileTable(file, excluded, frozen, split, expanded)}</div>`;
}

const SHORTCUTS = "Keys (focus in the review): j / k next / previous change, w next change not matched exactly, z wrap long lines, a select all, x select none";

function render({ model, el }) {
  const root = document.createElement("div");
  root.className = "nbedit-review nbedit-view";
  root.tabIndex = -1; // the keys work once anything in the review has focus
  let wrap = false;
  let current = -1; // the change last jumped to
  el.appendChild(root);
  const collapsed = new Set();
  const expanded = new Map();
  // notebooks: lines of original cells fetched from the kernel, opened unchanged cells and runs
  const cellView = { cellLines: new Map(), openCells: new Set(), openRuns: new Set() };
  let clicked = false; // the double-click guard: one decision per state change

  const excludedSet = () => new Set((model.get("excluded") || []).map(([file, hunk]) => `${file}:${hunk === null ? -1 : hunk}`));

  function selection(doc, excluded) {
    let total = 0;
    for (const file of doc.files) total += file.whole ? 1 : file.hunk_count;
    return [total - excluded.size, total];
  }

  function draw() {
    const doc = model.get("doc") || { files: [] };
    const state = model.get("review_state");
    const frozen = state !== "pending";
    const split = model.get("view_mode") === "split";
    const excluded = excludedSet();
    const [chosen, total] = selection(doc, excluded);
    const scroll = root.querySelector(".nb-scroll");
    const title = doc.title ? `<div class="nb-headline">${esc(doc.title)}</div>` : "";
    const top =
      `<div class="nb-top">${title}<span class="nb-summary">${esc(doc.headline)}</span>` +
      `<span class="nb-views" role="group" aria-label="diff layout">` +
      `<button type="button" class="nb-view-button" data-view="unified" aria-pressed="${!split}">Unified</button>` +
      `<button type="button" class="nb-view-button" data-view="split" aria-pressed="${split}">Side by side</button></span></div>`;
    const files = doc.files.map((file) => fileBox(file, excluded, frozen, split, collapsed, expanded, cellView)).join("");
    const replan = model.get("replan_available") ? "" : " hidden";
    const decided = frozen || clicked ? " disabled" : "";
    const pick = frozen || total < 2 ? " disabled" : "";
    const inexact = doc.files.some((file) => file.inexact);
    const tools =
      `<span class="nb-tools" role="group" aria-label="selection and navigation" title="${esc(SHORTCUTS)}">` +
      `<button type="button" class="nb-small nb-select-all"${pick} aria-label="select every part of the change">all</button>` +
      `<button type="button" class="nb-small nb-select-none"${pick} aria-label="select no part of the change">none</button>` +
      `<button type="button" class="nb-small nb-go" data-go="-1" aria-label="previous change (k)">↑ prev</button>` +
      `<button type="button" class="nb-small nb-go" data-go="1" aria-label="next change (j)">↓ next</button>` +
      (inexact ? `<button type="button" class="nb-small nb-go" data-go="inexact" aria-label="next change not matched exactly (w)">⚠ next inexact</button>` : "") +
      `<button type="button" class="nb-small nb-wrap" aria-pressed="${wrap}" aria-label="wrap long lines (z)">wrap</button></span>`;
    const foot =
      `<div class="nb-foot-holder"><div class="nb-foot">` +
      `<button type="button" class="nb-button nb-primary nbedit-apply"${decided} aria-label="Apply the selected changes">✔ Apply</button>` +
      `<button type="button" class="nb-button nbedit-reject"${["pending", "stale", "conflict", "error"].includes(state) ? "" : " disabled"} aria-label="Reject the change">✖ Reject</button>` +
      `<button type="button" class="nb-button nbedit-replan"${replan} aria-label="Plan the change again against the current files">${esc(model.get("replan_label") || "↻ Re-plan")}</button>` +
      `<span class="nb-selection" aria-live="polite">${chosen} of ${total} part${total === 1 ? "" : "s"} selected</span>${tools}</div></div>` +
      `<div class="nbedit-status nbedit-state-${esc(state)}" role="status" aria-live="polite"><b>nbedit</b>: ${esc(model.get("status_message"))}</div>` +
      `<div class="nb-detail">${model.get("detail_html") || ""}</div>`;
    const focused = document.activeElement && root.contains(document.activeElement) ? focusKey(document.activeElement) : null;
    root.innerHTML = top + files + foot;
    root.classList.toggle("nb-wrap", wrap);
    placeFoot();
    const blocks = changeBlocks();
    if (current >= 0 && current < blocks.length) blocks[current].classList.add("nb-current");
    if (scroll) {
      const again = root.querySelector(".nb-scroll");
      if (again) again.scrollLeft = scroll.scrollLeft;
    }
    if (focused) {
      const target = root.querySelector(focused);
      if (target) target.focus();
    }
  }

  function focusKey(element) {
    // keep keyboard focus on the same control across a redraw
    if (element.dataset.key) return `input[data-key="${element.dataset.key}"]`;
    if (element.dataset.view) return `button[data-view="${element.dataset.view}"]`;
    if (element.classList.contains("nb-collapse")) return `button.nb-collapse[data-file="${element.dataset.file}"]`;
    if (element.classList.contains("nb-cell-open")) return `button.nb-cell-open[data-file="${element.dataset.file}"][data-cell="${element.dataset.cell}"]`;
    for (const name of ["nbedit-apply", "nbedit-reject", "nbedit-replan"]) {
      if (element.classList.contains(name)) return `button.${name}`;
    }
    return null;
  }

  function visibleBottom() {
    // where the review's visible area ends: the window, or the lowest edge an ancestor clips at
    // (JupyterLab's notebook panel ends above the status bar)
    let bottom = window.innerHeight;
    for (let box = root.parentElement; box && box !== document.body; box = box.parentElement) {
      if (getComputedStyle(box).overflowY !== "visible") bottom = Math.min(bottom, box.getBoundingClientRect().bottom);
    }
    return bottom;
  }

  function placeFoot() {
    // The bar with Apply/Reject and the selection stays in view while a long plan scrolls by:
    // position:sticky does not work here (an output area scrolls sideways, which makes it the
    // sticky box), so the bar is fixed to the bottom of the visible part of the scroll box
    // whenever its own place is below it and the review is on screen.
    const holder = root.querySelector(".nb-foot-holder");
    const foot = holder && holder.firstElementChild;
    if (!foot || !root.isConnected) return;
    const bottom = visibleBottom();
    const rect = root.getBoundingClientRect();
    const height = foot.offsetHeight;
    const float = holder.getBoundingClientRect().top + height > bottom && rect.top + 2 * height < bottom;
    foot.classList.toggle("nb-floating", float);
    holder.style.height = float ? `${height}px` : "";
    if (!float) {
      foot.style.left = foot.style.width = foot.style.bottom = "";
      return;
    }
    // a fixed element is placed in its containing block, which JupyterLab's notebook panel
    // (CSS containment) makes its own: place it at 0, measure, then move it where it belongs
    foot.style.width = `${rect.width}px`;
    foot.style.left = "0px";
    foot.style.bottom = "0px";
    const at = foot.getBoundingClientRect();
    foot.style.left = `${rect.left - at.left}px`;
    foot.style.bottom = `${at.bottom - bottom}px`;
  }

  const onScroll = () => placeFoot();
  document.addEventListener("scroll", onScroll, { capture: true, passive: true });
  window.addEventListener("resize", onScroll);

  function changeBlocks() {
    // the boxes that hold a change: a hunk of a file, a changed cell of a notebook
    return [...root.querySelectorAll("tbody.nb-block")].filter((block) => block.querySelector("tr.h, tr.nb-cellhead input, tr.nb-cellhead .nb-cellchange"));
  }

  function go(where) {
    const blocks = changeBlocks();
    if (!blocks.length) return;
    let next = current;
    if (where === "inexact") {
      const order = blocks.map((_, offset) => (current + 1 + offset) % blocks.length);
      const found = order.find((index) => /⚠/.test(blocks[index].querySelector("tr").textContent));
      if (found === undefined) return;
      next = found;
    } else {
      next = Math.min(blocks.length - 1, Math.max(0, current + where));
      if (current < 0) next = where > 0 ? 0 : blocks.length - 1;
    }
    current = next;
    for (const block of blocks) block.classList.remove("nb-current");
    const block = blocks[current];
    block.classList.add("nb-current");
    block.scrollIntoView({ block: "center" });
    const box = block.querySelector("input[type=checkbox]");
    if (box) box.focus({ preventScroll: true });
  }

  function selectAll(include, fileIndex) {
    const doc = model.get("doc") || { files: [] };
    const keep = (model.get("excluded") || []).filter(([file]) => fileIndex !== undefined && file !== fileIndex);
    if (!include) {
      for (const file of doc.files) {
        if (fileIndex !== undefined && file.index !== fileIndex) continue;
        if (file.whole) keep.push([file.index, null]);
        else for (let hunk = 0; hunk < file.hunk_count; hunk++) keep.push([file.index, hunk]);
      }
    }
    model.set("excluded", keep);
    model.save_changes();
  }

  root.addEventListener("keydown", (event) => {
    if (event.ctrlKey || event.metaKey || event.altKey || (event.target.tagName === "INPUT" && event.target.type === "text")) return;
    const frozen = model.get("review_state") !== "pending";
    const keys = { j: () => go(1), k: () => go(-1), w: () => go("inexact"), z: () => { wrap = !wrap; draw(); } };
    if (!frozen) Object.assign(keys, { a: () => selectAll(true), x: () => selectAll(false) });
    const action = keys[event.key];
    if (action) {
      event.preventDefault();
      event.stopPropagation(); // JupyterLab's own single-key shortcuts do not fire inside the review
      action();
    }
  });

  root.addEventListener("click", (event) => {
    const button = event.target.closest("button");
    if (!button || button.disabled) return;
    if (button.classList.contains("nb-select-all") || button.classList.contains("nb-select-none")) {
      const file = button.dataset.file === undefined ? undefined : Number(button.dataset.file);
      selectAll(button.classList.contains("nb-select-all"), file);
      return;
    }
    if (button.dataset.go) {
      go(button.dataset.go === "inexact" ? "inexact" : Number(button.dataset.go));
      return;
    }
    if (button.classList.contains("nb-wrap")) {
      wrap = !wrap;
      draw();
      return;
    }
    const digest = (model.get("doc") || {}).digest || null;
    if (button.classList.contains("nbedit-apply")) {
      clicked = true;
      button.disabled = true;
      // the selection drawn now travels with the click: a toggle update still held back by a
      // busy kernel cannot change what is written
      model.send({ action: "apply", digest, included: includedKeys() });
    } else if (button.classList.contains("nbedit-reject")) {
      clicked = true;
      button.disabled = true;
      model.send({ action: "reject", digest });
    } else if (button.classList.contains("nbedit-replan")) {
      button.disabled = true;
      model.send({ action: "replan", digest });
    } else if (button.dataset.view) {
      model.set("view_mode", button.dataset.view);
      model.save_changes();
    } else if (button.classList.contains("nb-collapse")) {
      const index = Number(button.dataset.file);
      if (collapsed.has(index)) collapsed.delete(index);
      else collapsed.add(index);
      draw();
    } else if (button.classList.contains("nb-cells-run")) {
      cellView.openRuns.add(button.dataset.run);
      draw();
    } else if (button.classList.contains("nb-cell-open") || button.classList.contains("nb-cell-gap")) {
      const key = `${button.dataset.file}:${button.dataset.cell}`;
      if (button.classList.contains("nb-cell-open")) {
        if (cellView.openCells.has(key)) cellView.openCells.delete(key);
        else cellView.openCells.add(key);
      }
      if (!cellView.cellLines.has(key)) {
        model.send({ action: "cell", file: Number(button.dataset.file), cell: Number(button.dataset.cell) });
      }
      draw();
    } else if (button.classList.contains("nb-expand")) {
      button.disabled = true;
      const label = button.textContent;
      button.textContent = "loading…";
      // the lines come from the kernel; a saved notebook opened without one gets no answer
      setTimeout(() => {
        if (button.isConnected && button.disabled) {
          button.disabled = false;
          button.textContent = `${label} (showing them needs the running kernel; run the cell again)`;
        }
      }, 8000);
      model.send({
        action: "expand",
        file: Number(button.dataset.file),
        section: Number(button.dataset.section),
        old_line: Number(button.dataset.old),
        count: Number(button.dataset.count),
      });
    }
  });

  root.addEventListener("change", (event) => {
    const box = event.target;
    if (!box.dataset || !box.dataset.key) return;
    const [file, hunk] = box.dataset.key.split(":").map(Number);
    const current = (model.get("excluded") || []).filter(([f, h]) => !(f === file && (h === null ? -1 : h) === hunk));
    if (!box.checked) current.push([file, hunk === -1 ? null : hunk]);
    model.set("excluded", current);
    model.save_changes();
  });

  function includedKeys() {
    // every toggle of the drawn plan that is ticked, as [file, hunk or null]
    const doc = model.get("doc") || { files: [] };
    const excluded = excludedSet();
    const keys = [];
    for (const file of doc.files) {
      if (file.whole) {
        if (!excluded.has(`${file.index}:-1`)) keys.push([file.index, null]);
        continue;
      }
      for (let hunk = 0; hunk < file.hunk_count; hunk++) {
        if (!excluded.has(`${file.index}:${hunk}`)) keys.push([file.index, hunk]);
      }
    }
    return keys;
  }

  model.on("msg:custom", (message) => {
    if (message && message.kind === "refused") {
      clicked = false;
      draw();
    } else if (message && message.kind === "cell") {
      cellView.cellLines.set(`${message.file}:${message.cell}`, message.lines);
      draw();
    } else if (message && message.kind === "lines") {
      expanded.set(`${message.file}:${message.section}`, message.lines);
      draw();
    }
  });

  const redraw = () => {
    clicked = false;
    draw();
  };
  model.on("change:doc", () => {
    // before the redraw below: new rows, new gaps, new cells
    expanded.clear();
    cellView.cellLines.clear();
    cellView.openCells.clear();
    cellView.openRuns.clear();
  });
  for (const name of ["doc", "review_state", "status_message", "detail_html", "replan_available", "replan_label"]) {
    model.on(`change:${name}`, redraw);
  }
  model.on("change:excluded", draw);
  model.on("change:view_mode", draw);
  draw();
  return () => {
    document.removeEventListener("scroll", onScroll, { capture: true });
    window.removeEventListener("resize", onScroll);
  };
}

export default { render };
