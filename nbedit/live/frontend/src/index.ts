/**
 * nbedit live tabs: the open tabs of a file nbedit changes take the change in place.
 *
 * The nbedit server extension asks over a websocket (/nbedit/live/events):
 *   {type: "query", id, changes}  does a tab show these files, and does it still hold
 *                                  the old text of every edited cell/line? (nothing changes)
 *   {type: "apply", id, changes}  nbedit wrote the file: put the edited cells'/lines' new
 *                                  text into the open document, then catch the document's
 *                                  record of the file on disk up (last_modified and hash),
 *                                  so the next save raises no "File Changed" dialog.
 * and gets {type: "reply", id, results: {path: {state, detail, tabs, conflicts, document}}}.
 *
 * Only the edited cells or lines are touched: outputs, and what the person typed
 * elsewhere and has not saved, stay as they are. A tab whose edited text differs from
 * what the change replaces (unsaved typing there) is never written to: it answers
 * "conflict" and nbedit writes nothing.
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { URLExt } from '@jupyterlab/coreutils';
import { IDocumentManager } from '@jupyterlab/docmanager';
import { DocumentRegistry } from '@jupyterlab/docregistry';
import { ServerConnection } from '@jupyterlab/services';

interface ICellEdit {
  operation: 'replace' | 'insert' | 'delete';
  index: number;
  cell_id: string | null;
  cell_type: string;
  old_source: string | null;
  new_source: string | null;
}

interface ITextEdit {
  start_line: number;
  old_text: string;
  new_text: string;
}

interface ILiveChange {
  path: string;
  kind: 'notebook' | 'text';
  cells: ICellEdit[];
  lines: ITextEdit[];
  structural: boolean;
  metadata: { [key: string]: any } | null;
}

interface IConflict {
  where: string;
  expected: string;
  live: string | null;
}

interface IResult {
  state: 'closed' | 'open' | 'conflict' | 'applied' | 'failed';
  detail: string;
  tabs: number;
  conflicts: IConflict[];
  document?: unknown;
}

/** A planned in-place update of one open document: what differs, and how to apply. */
interface IUpdate {
  conflicts: IConflict[];
  apply: () => void;
  document: () => unknown;
}

type Context = DocumentRegistry.Context;

/** Where each document is edited, found again in the live document. */
function planNotebook(shared: any, change: ILiveChange): IUpdate {
  const conflicts: IConflict[] = [];
  const cells: any[] = [...shared.cells];
  const replaced: Array<[any, ICellEdit]> = [];
  const deleted: any[] = [];
  for (const edit of change.cells) {
    if (edit.operation === 'insert') {
      continue;
    }
    let cell: any = undefined;
    if (edit.cell_id) {
      cell = cells.find(candidate => candidate.id === edit.cell_id);
    } else if (edit.index < cells.length) {
      cell = cells[edit.index];
    }
    const where = `cell ${edit.index + 1}${edit.cell_id ? ` (id ${edit.cell_id})` : ''}`;
    if (!cell) {
      conflicts.push({
        where: `${where} is no longer in the tab`,
        expected: edit.old_source ?? '',
        live: null
      });
      continue;
    }
    const live = cell.getSource();
    if (live !== edit.old_source) {
      conflicts.push({ where, expected: edit.old_source ?? '', live });
      continue;
    }
    if (edit.operation === 'delete') {
      deleted.push(cell);
    } else {
      replaced.push([cell, edit]);
    }
  }
  const apply = () => {
    shared.transact(() => {
      for (const [cell, edit] of replaced) {
        if (cell.cell_type === edit.cell_type) {
          updateText(cell, cell.getSource(), edit.new_source ?? '');
        } else {
          const index = [...shared.cells].indexOf(cell);
          const data = cell.toJSON();
          shared.deleteCell(index);
          shared.insertCell(index, {
            cell_type: edit.cell_type,
            source: edit.new_source ?? '',
            id: data.id,
            metadata: data.metadata ?? {}
          });
        }
      }
      for (const cell of deleted) {
        const index = [...shared.cells].indexOf(cell);
        if (index >= 0) {
          shared.deleteCell(index);
        }
      }
      const inserts = change.cells
        .filter(edit => edit.operation === 'insert')
        .sort((a, b) => a.index - b.index);
      for (const edit of inserts) {
        const cell: any = {
          cell_type: edit.cell_type,
          source: edit.new_source ?? '',
          metadata: {}
        };
        if (edit.cell_id) {
          cell.id = edit.cell_id;
        }
        shared.insertCell(Math.min(edit.index, shared.cells.length), cell);
      }
      if (change.metadata) {
        shared.setMetadata(change.metadata);
      }
    });
  };
  const document = () =>
    [...shared.cells].map((cell: any) => ({
      id: cell.id,
      cell_type: cell.cell_type,
      source: cell.getSource()
    }));
  return { conflicts, apply, document };
}

/** Replace only the part of ``before`` that differs from ``after`` (the cursor stays put). */
function updateText(shared: any, before: string, after: string): void {
  if (before === after) {
    return;
  }
  let start = 0;
  const shortest = Math.min(before.length, after.length);
  while (start < shortest && before[start] === after[start]) {
    start++;
  }
  let end = 0;
  while (
    end < shortest - start &&
    before[before.length - 1 - end] === after[after.length - 1 - end]
  ) {
    end++;
  }
  shared.updateSource(
    start,
    before.length - end,
    after.slice(start, after.length - end)
  );
}

function lineStarts(text: string): number[] {
  const starts = [0];
  for (let index = 0; index < text.length; index++) {
    if (text[index] === '\n') {
      starts.push(index + 1);
    }
  }
  return starts;
}

function planText(shared: any, change: ILiveChange): IUpdate {
  const text: string = shared.getSource();
  const starts = lineStarts(text);
  const conflicts: IConflict[] = [];
  const spans: Array<[number, number, string]> = [];
  // an editor that holds the text with "\n" where the file has "\r\n": compare and write alike
  const plain = !text.includes('\r');
  const lines = change.lines.map(edit =>
    plain
      ? {
          ...edit,
          old_text: edit.old_text.replace(/\r\n/g, '\n'),
          new_text: edit.new_text.replace(/\r\n/g, '\n')
        }
      : edit
  );
  for (const edit of lines) {
    const count = edit.old_text.split('\n').length - 1 || 1;
    const where = `lines ${edit.start_line + 1}-${edit.start_line + count}`;
    let found = -1;
    const expected = starts[edit.start_line];
    if (
      expected !== undefined &&
      text.startsWith(edit.old_text, expected) &&
      (edit.old_text !== '' || text === '')
    ) {
      found = expected;
    } else if (edit.old_text !== '') {
      // the person's typing above moved the lines: the old text, once, at a line start
      const places = starts.filter(start =>
        text.startsWith(edit.old_text, start)
      );
      if (places.length === 1) {
        found = places[0];
      }
    }
    if (found < 0) {
      const first = starts[edit.start_line] ?? text.length;
      const last = starts[edit.start_line + count] ?? text.length;
      conflicts.push({
        where,
        expected: edit.old_text,
        live: text.slice(first, last)
      });
      continue;
    }
    spans.push([found, found + edit.old_text.length, edit.new_text]);
  }
  spans.sort((a, b) => a[0] - b[0]);
  for (let index = 1; index < spans.length; index++) {
    if (spans[index][0] < spans[index - 1][1]) {
      conflicts.push({
        where: 'two edited runs of lines overlap in the tab',
        expected: '',
        live: null
      });
    }
  }
  const apply = () => {
    shared.transact(() => {
      for (const [start, end, value] of [...spans].reverse()) {
        shared.updateSource(start, end, value);
      }
    });
  };
  return { conflicts, apply, document: () => shared.getSource() };
}

function plan(context: Context, change: ILiveChange): IUpdate | null {
  const shared: any = context.model?.sharedModel;
  if (!shared) {
    return null;
  }
  if (change.kind === 'notebook') {
    return shared.cells ? planNotebook(shared, change) : null;
  }
  return typeof shared.getSource === 'function'
    ? planText(shared, change)
    : null;
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'nbedit-live:plugin',
  description:
    'Open tabs take the changes nbedit applies in place (no reload, no "File Changed" dialog).',
  autoStart: true,
  requires: [IDocumentManager],
  activate: (app: JupyterFrontEnd, documents: IDocumentManager) => {
    const contents = app.serviceManager.contents;
    const status = {
      connected: false,
      applied: 0,
      log: [] as Array<{ path: string; time: number; state: string }>
    };
    (window as any).nbeditLive = status;

    const contextsOf = (path: string): Context[] => {
      const found = new Set<Context>();
      for (const widget of app.shell.widgets('main')) {
        const context = documents.contextForWidget(widget);
        if (
          context &&
          context.isReady &&
          contents.localPath(context.path) === path
        ) {
          found.add(context);
        }
      }
      return [...found];
    };

    const answer = async (
      kind: string,
      change: ILiveChange
    ): Promise<IResult> => {
      const contexts = contextsOf(change.path);
      const result: IResult = {
        state: 'closed',
        detail: 'no open tab shows it',
        tabs: contexts.length,
        conflicts: []
      };
      if (!contexts.length) {
        return result;
      }
      const updates = contexts.map(context => ({
        context,
        update: plan(context, change)
      }));
      for (const { update } of updates) {
        if (!update) {
          return {
            ...result,
            state: 'failed',
            detail: 'the tab is not a notebook or text editor'
          };
        }
        if (update.conflicts.length) {
          return {
            ...result,
            state: 'conflict',
            detail: 'the open tab has unsaved changes in the edited text',
            conflicts: update.conflicts,
            document: update.document()
          };
        }
      }
      if (kind === 'query') {
        return { ...result, state: 'open', detail: 'an open tab shows it' };
      }
      for (const { context, update } of updates) {
        const wasDirty = context.model.dirty;
        update!.apply();
        if (!wasDirty) {
          context.model.dirty = false; // it matches the file on disk again
        }
        try {
          // the file on disk now holds the change: the tab's record of it must say so,
          // or its next save would ask about a file "changed on disk"
          const disk = await contents.get(context.path, {
            content: false,
            hash: true
          });
          (context as any)._updateContentsModel({
            ...context.contentsModel,
            ...disk
          });
        } catch (error) {
          console.warn('nbedit live: could not read the saved file', error);
        }
      }
      status.applied++;
      status.log.push({ path: change.path, time: Date.now(), state: 'applied' });
      return { ...result, state: 'applied', detail: 'the open tab took it' };
    };

    let delay = 500;
    const connect = () => {
      const settings = ServerConnection.makeSettings();
      let url = URLExt.join(settings.wsUrl, 'nbedit', 'live', 'events');
      if (settings.token) {
        url += `?token=${encodeURIComponent(settings.token)}`;
      }
      const socket = new settings.WebSocket(url);
      socket.onopen = () => {
        status.connected = true;
        delay = 500;
      };
      socket.onclose = () => {
        status.connected = false;
        delay = Math.min(delay * 2, 30000);
        window.setTimeout(connect, delay);
      };
      socket.onmessage = async (event: MessageEvent) => {
        let message: any;
        try {
          message = JSON.parse(event.data);
        } catch {
          return;
        }
        if (message.type !== 'query' && message.type !== 'apply') {
          return;
        }
        const results: { [path: string]: IResult } = {};
        for (const change of message.changes as ILiveChange[]) {
          try {
            results[change.path] = await answer(message.type, change);
          } catch (error) {
            results[change.path] = {
              state: 'failed',
              detail: String(error),
              tabs: 0,
              conflicts: []
            };
          }
        }
        socket.send(JSON.stringify({ type: 'reply', id: message.id, results }));
      };
    };
    connect();
  }
};

export default plugin;
