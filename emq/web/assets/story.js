// A job's story on its page: its times (enqueued, first started, finished,
// ran for), every run read from the queue's events stream with its start,
// end, duration, outcome and error, saying so when the stream no longer
// holds them all; its payload, error and result, JSON pretty-printed; and
// its raw events. app.js calls these with its kit; values from the server
// reach the document as text only.
'use strict';

window.emqStory = (function () {
  function duration(ms) {
    if (ms === null || ms === undefined) return '–';
    if (ms < 1000) return ms + ' ms';
    if (ms < 60000) return (ms / 1000).toFixed(ms < 10000 ? 2 : 1) + ' s';
    const m = Math.floor(ms / 60000);
    return m < 60 ? m + ' min ' + Math.round((ms % 60000) / 1000) + ' s' : Math.floor(m / 60) + ' h ' + (m % 60) + ' min';
  }

  // JSON text re-indented as written: numbers, strings and escapes are
  // copied, never parsed, so a 64-bit id stays exact.
  function pretty(text) {
    let out = '', depth = 0, inString = false;
    const indent = () => '\n' + '  '.repeat(depth);
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      if (inString) {
        out += c;
        if (c === '\\') out += text[++i];
        else if (c === '"') inString = false;
      } else if (c === '"') {
        inString = true;
        out += c;
      } else if (c === '{' || c === '[') {
        const close = c === '{' ? '}' : ']';
        let j = i + 1;
        while (/\s/.test(text[j] || '')) j++;
        if (text[j] === close) { out += c + close; i = j; continue; }
        depth++;
        out += c + indent();
      } else if (c === '}' || c === ']') {
        depth--;
        out += indent() + c;
      } else if (c === ',') {
        out += ',' + indent();
      } else if (c === ':') {
        out += ': ';
      } else if (!/\s/.test(c)) {
        out += c;
      }
    }
    return out;
  }

  // A field's text, pretty when it is a whole JSON object or array.
  function shown(b) {
    if (b.hex !== undefined) return { text: b.hex, json: false };
    if (!b.truncated && /^\s*[[{]/.test(b.text)) {
      try {
        JSON.parse(b.text);
        return { text: pretty(b.text), json: true };
      } catch (e) {
        // Not JSON: shown as it is.
      }
    }
    return { text: b.text, json: false };
  }

  function bytesBlock(kit, label, b, href) {
    const el = kit.el;
    if (!b) return [el('h3', {}, label), el('p', { class: 'muted' }, 'none')];
    const s = shown(b);
    const note = (b.hex !== undefined ? 'not UTF-8, shown as hex; ' : '') + (s.json ? 'JSON, indented here; ' : '') +
      b.bytes + ' bytes';
    return [el('h3', {}, label + ' '), el('p', { class: 'muted' }, note,
      b.truncated ? [' · truncated · ', el('a', { href: href }, 'the whole ' + label)] : null),
      el('pre', { class: 'bytes', 'data-field': label, 'data-json': s.json ? 'true' : null }, s.text)];
  }

  const OUTCOMES = {
    completed: 'completed', failed: 'failed, retried', died: 'failed, died', released: 'released (not counted)',
    removed: 'removed', lost: 'lease lost, claimed again', running: 'running now', unknown: 'no end in the stream',
  };

  // The times of the whole job, as fields beside the row's.
  function timeFields(kit, story) {
    if (!story) return [];
    const at = window.emqActions.at;
    return [['enqueued', at(story.enqueued_ms)], ['started', at(story.started_ms)],
      ['finished', at(story.finished_ms)], ['ran for', duration(story.run_ms)]]
      .map(([k, v]) => [kit.el('dt', {}, k), kit.el('dd', { 'data-time': k }, v)]);
  }

  // Every run: its attempt, start, end, duration, outcome and error.
  function runsSection(kit, data) {
    const el = kit.el, at = window.emqActions.at, story = data.story;
    if (!data.keeps_events) {
      return [el('h3', {}, 'Attempts'), el('p', { class: 'muted', id: 'runs-off' },
        'This queue keeps no events, so its attempts are not listed (only the last error is kept): set ' +
        'queues[].events in emqd\'s config.')];
    }
    const note = story.cut ? el('p', { class: 'notice', id: 'runs-cut' }, 'Not every attempt may show: ' + story.cut + '.') : null;
    if (!story.runs.length) return [el('h3', {}, 'Attempts'), note, el('p', { class: 'muted', id: 'runs-none' }, 'It has not run.')];
    const head = el('tr', {}, ['#', 'Attempt', 'Started', 'Ended', 'Ran', 'Outcome', 'Error'].map((t) => el('th', {}, t)));
    const rows = story.runs.map((r, i) => el('tr', { 'data-run': i + 1, 'data-outcome': r.outcome },
      el('td', { class: 'num' }, i + 1), el('td', { class: 'num' }, r.attempt), el('td', {}, at(r.started_ms)),
      el('td', {}, at(r.ended_ms)), el('td', { class: 'num' }, duration(r.run_ms)),
      el('td', { class: r.outcome === 'died' || r.outcome === 'failed' ? 'held' : null }, OUTCOMES[r.outcome] || r.outcome),
      el('td', { class: 'err' }, r.error ? kit.bytesText(r.error) : '')));
    return [el('h3', {}, 'Attempts (' + story.runs.length + ')'), note,
      el('table', { id: 'runs' }, el('thead', {}, head), el('tbody', {}, rows))];
  }

  let eventsOpen = false;

  // A job's events, oldest first: when, what, the attempt, and its error or progress.
  function eventsSection(kit, data) {
    const el = kit.el, at = window.emqActions.at;
    if (!data.keeps_events || !data.events.length) return null;
    const rows = data.events.map((e) => el('tr', {},
      el('td', {}, at(Number(e.entry.split('-')[0]))), el('td', {}, e.event), el('td', {}, e.attempt),
      el('td', {}, e.error ? kit.bytesText(e.error) : e.progress ? kit.bytesText(e.progress) : '')));
    const node = el('details', { open: eventsOpen }, el('summary', {}, 'Events (' + data.events.length + ')'),
      el('table', { id: 'events' }, el('thead', {}, el('tr', {}, el('th', {}, 'when'), el('th', {}, 'event'),
        el('th', {}, 'attempt'), el('th', {}, 'error or progress'))), el('tbody', {}, rows)));
    // Open or shut as the reader left it, across the live redraws.
    node.addEventListener('toggle', () => { eventsOpen = node.open; });
    return node;
  }

  return { bytesBlock, timeFields, runsSection, eventsSection, pretty, duration };
})();
