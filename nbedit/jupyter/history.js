// The history table's browser side (anywidget ESM, no build step).
// State it reads: rows, title, all_sessions. Sorting and filtering happen here, on the rows it has;
// Diff, Undo, Restore and Refresh are messages to the kernel, which draws the diff or review below.
function shortOrigin(origin) {
  // "agent:claude:toolu_01AbCdEf..." -> "agent:claude:…dEf": the kind and the tail tell rows apart,
  // and the actions column stays in view (the whole origin is the cell's tooltip)
  const text = String(origin || "");
  if (text.length <= 22) return text;
  const parts = text.split(":");
  const head = parts.length > 1 ? parts.slice(0, -1).join(":").slice(0, 14) : text.slice(0, 12);
  return `${head}:…${text.slice(-6)}`;
}

function esc(text) {
  return String(text).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

function options(values, chosen, everything) {
  const items = [`<option value="">${esc(everything)}</option>`];
  for (const value of values) {
    items.push(`<option value="${esc(value)}"${value === chosen ? " selected" : ""}>${esc(value)}</option>`);
  }
  return items.join("");
}

function render({ model, el }) {
  const root = document.createElement("div");
  root.className = "nbedit-history-table nbedit-view";
  el.appendChild(root);
  const view = { newestFirst: true, file: "", session: "", selected: "", folded: new Set() };

  function shownRows() {
    const rows = (model.get("rows") || []).filter(
      (row) => (!view.file || row.files.includes(view.file)) && (!view.session || row.session === view.session),
    );
    // entries arrive newest first; equal times keep that order
    rows.sort((a, b) => (a.time === b.time ? a.order - b.order : a.time < b.time ? 1 : -1));
    if (!view.newestFirst) rows.reverse();
    return rows;
  }

  function draw() {
    const all = model.get("rows") || [];
    const files = [...new Set(all.flatMap((row) => row.files))].sort();
    const sessions = [...new Set(all.map((row) => row.session))].sort();
    if (view.file && !files.includes(view.file)) view.file = "";
    if (view.session && (!sessions.includes(view.session) || !model.get("all_sessions"))) view.session = "";
    const rows = shownRows();
    const allSessions = model.get("all_sessions");
    const sort = view.newestFirst ? "descending" : "ascending";
    const toolbar =
      `<div class="nb-top"><span class="nb-summary">${esc(model.get("title"))}</span>` +
      `<label>file <select class="nb-filter-file" aria-label="show entries that changed this file">${options(files, view.file, "all files")}</select></label>` +
      (allSessions
        ? `<label>session <select class="nb-filter-session" aria-label="show entries of this session">${options(sessions, view.session, "every session")}</select></label>`
        : "") +
      `<span class="nb-views"><button type="button" class="nb-view-button nbedit-history-all" aria-pressed="${allSessions}" title="entries of every session, not only this kernel">All sessions</button>` +
      `<button type="button" class="nb-view-button nbedit-history-refresh">↻ Refresh</button></span></div>`;
    const head =
      `<tr><th scope="col">id</th>` +
      `<th scope="col" aria-sort="${sort}"><button type="button" class="nb-sort" aria-label="sort by time, now ${view.newestFirst ? "newest" : "oldest"} first">time ${view.newestFirst ? "▾" : "▴"}</button></th>` +
      `<th scope="col">cell</th><th scope="col">files</th><th scope="col">+/−</th><th scope="col">origin</th><th scope="col">status</th>${allSessions ? '<th scope="col">session</th>' : ""}<th scope="col">actions</th></tr>`;
    // a cell run or agent turn: one header row, its entries folded under it (click to fold/unfold)
    const columns = allSessions ? 9 : 8;
    let previous = null;
    const body = rows
      .map((row) => {
        let header = "";
        const count = row.checkpoint ? rows.filter((other) => other.checkpoint === row.checkpoint).length : 0;
        if (count > 1 && row.checkpoint !== previous) {
          const folded = view.folded.has(row.checkpoint);
          header =
            `<tr class="nb-checkpoint" data-checkpoint="${esc(row.checkpoint)}"><td colspan="${columns}">` +
            `<button type="button" class="nb-fold" aria-expanded="${!folded}" data-checkpoint="${esc(row.checkpoint)}">${folded ? "▸" : "▾"} ${esc(row.checkpoint_label)}</button>` +
            ` <span class="nb-note">${count} entries</span></td></tr>`;
        }
        previous = row.checkpoint;
        if (count > 1 && view.folded.has(row.checkpoint)) return header;
        const disabled = row.applied ? "" : " disabled";
        const undo = row.undoable
          ? `<button type="button" class="nb-button nbedit-history-undo" data-id="${esc(row.id)}" aria-label="review undoing ${esc(row.id)}">Undo</button>`
          : "";
        const flags = row.flags ? ` <span class="nb-badge" title="hunks not matched exactly">⚠ ${esc(row.flags)}</span>` : "";
        return (
          header +
          `<tr class="nb-entry${row.id === view.selected ? " nb-selected" : ""}" data-id="${esc(row.id)}">` +
          `<td class="nb-path">${esc(row.id)}</td><td class="nb-time">${esc(row.time)}</td><td>${esc(row.cell)}</td>` +
          `<td class="nb-path nb-files">${esc(row.files_text)}</td>` +
          `<td class="num"><span class="nb-plus" aria-label="${row.added} lines added">+${row.added}</span> <span class="nb-minus" aria-label="${row.removed} lines removed">−${row.removed}</span></td>` +
          `<td title="${esc(row.origin)}">${esc(shortOrigin(row.origin))}</td><td>${esc(row.status)}${flags}</td>${allSessions ? `<td title="${esc(row.session)}">${esc(row.session.length > 16 ? row.session.slice(0, 15) + "…" : row.session)}</td>` : ""}` +
          `<td class="nb-actions"><button type="button" class="nb-button nbedit-history-diff" data-id="${esc(row.id)}" aria-label="show what ${esc(row.id)} changed">Diff</button>${undo}` +
          `<button type="button" class="nb-button nbedit-history-restore" data-id="${esc(row.id)}"${disabled} aria-label="review restoring the files as they were before ${esc(row.id)}">Restore</button>` +
          (row.checkpoint
            ? `<button type="button" class="nb-button nbedit-history-rewind" data-id="${esc(row.id)}"${disabled} title="take every file back to before ${esc(row.checkpoint_label)}, keeping later edits by others" aria-label="review rewinding to before ${esc(row.checkpoint_label)}">Rewind</button>`
            : "") +
          `</td></tr>`
        );
      })
      .join("");
    const empty = rows.length ? "" : `<div class="nb-note">no entries${all.length ? " match the filters" : " yet"}</div>`;
    root.innerHTML = `${toolbar}<div class="nb-scroll"><table class="nb-history">${head}${body}</table></div>${empty}`;
  }

  root.addEventListener("change", (event) => {
    if (event.target.classList.contains("nb-filter-file")) view.file = event.target.value;
    else if (event.target.classList.contains("nb-filter-session")) view.session = event.target.value;
    else return;
    draw();
    const again = root.querySelector(`select.${event.target.classList[0]}`);
    if (again) again.focus();
  });

  root.addEventListener("click", (event) => {
    const button = event.target.closest("button");
    if (!button) {
      const row = event.target.closest("tr.nb-entry");
      if (row) {
        view.selected = row.dataset.id;
        model.send({ action: "diff", id: row.dataset.id });
        draw();
      }
      return;
    }
    if (button.disabled) return;
    const id = button.dataset.id;
    if (button.classList.contains("nb-fold")) {
      const key = button.dataset.checkpoint;
      if (view.folded.has(key)) view.folded.delete(key);
      else view.folded.add(key);
      draw();
      const again = root.querySelector(`button.nb-fold[data-checkpoint="${CSS.escape(key)}"]`);
      if (again) again.focus();
    } else if (button.classList.contains("nb-sort")) {
      view.newestFirst = !view.newestFirst;
      draw();
      root.querySelector("button.nb-sort").focus();
    } else if (button.classList.contains("nbedit-history-all")) {
      model.set("all_sessions", !model.get("all_sessions"));
      model.save_changes();
    } else if (button.classList.contains("nbedit-history-refresh")) {
      model.send({ action: "refresh" });
    } else if (id) {
      const action = ["diff", "undo", "restore", "rewind"].find((name) => button.classList.contains(`nbedit-history-${name}`));
      if (action) {
        view.selected = id;
        model.send({ action, id });
        draw();
        const again = root.querySelector(`button.nbedit-history-${action}[data-id="${id}"]`);
        if (again) again.focus(); // keyboard users stay where they were
      }
    }
  });

  model.on("change:rows", draw);
  model.on("change:title", draw);
  model.on("change:all_sessions", draw);
  draw();
}

export default { render };
