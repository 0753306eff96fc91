// emq web's history parts: the totals strip at the top of every page
// (processed, failed, busy, enqueued, delayed, dead, across queues) and the
// chart of what a queue, or every queue, did per minute or per day, read
// from /api/history (the samples emqd keeps on the server, so a page opened
// tomorrow shows today). app.js calls these with its kit; everything is
// built with DOM calls, values from the server reach the document as text.
'use strict';

window.emqHistory = (function () {
  const RANGES = ['1h', '24h', '30d', '90d'];
  const CHART_READ_MS = 30000;  // a sample comes once a minute: no need to read more often
  const TOTALS_READ_MS = 2000;  // a queue page redraws on every event: the strip need not
  const W = 720, H = 120, PAD = 2;
  const charts = {};  // '' (every queue) or a queue's name -> its section, kept across redraws
  let totalsAt = 0;

  function svg(tag, attrs) {
    const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
    for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
    return node;
  }

  function count(n) {
    return Number(n).toLocaleString('en-US');
  }

  // ---- the totals strip ----

  function counter(q, name) {
    return (q.counters && q.counters[name]) || 0;
  }

  function totalsOf(queues, daemons) {
    const t = { processed: 0, failed: 0, busy: 0, enqueued: 0, delayed: 0, dead: 0 };
    for (const q of queues) {
      t.processed += counter(q, 'completed');
      t.failed += counter(q, 'retried') + counter(q, 'dead');
      t.enqueued += q.pending;
      t.delayed += q.delayed;
      t.dead += q.dead;
    }
    for (const d of daemons) t.busy += d.busy;
    return t;
  }

  const TOTAL_NOTES = {
    processed: 'jobs completed, every queue, since each began',
    failed: 'failed attempts (retried) and deaths, every queue, since each began',
    busy: 'jobs the live daemons run now',
    enqueued: 'pending jobs, every queue',
    delayed: 'delayed jobs, every queue',
    dead: 'dead jobs, every queue',
  };

  // Redraws #totals at most every TOTALS_READ_MS; a failed read leaves the
  // last totals (the banner already says why). A call held back is made
  // once the time is up: a page that no longer polls may get no other.
  let heldBack = null;
  async function totals(kit) {
    const wait = TOTALS_READ_MS - (Date.now() - totalsAt);
    if (wait > 0) {
      if (!heldBack) heldBack = setTimeout(() => { heldBack = null; totals(kit); }, wait);
      return;
    }
    totalsAt = Date.now();
    let t, prefetched;
    try {
      const [queues, daemons] = await Promise.all([kit.api('/api/queues'), kit.api('/api/daemons')]);
      t = totalsOf(queues.queues, daemons.daemons);
      // busy is what the slots run; jobs claimed ahead (prefetch) wait for a slot, said apart.
      prefetched = daemons.daemons.reduce((n, d) => n + (d.prefetched || 0), 0);
    } catch (e) {
      totalsAt = 0;
      return;
    }
    const strip = document.getElementById('totals');
    strip.replaceChildren(...Object.entries(t).map(([name, value]) =>
      kit.el('span', { class: 'total', 'data-total': name,
        title: TOTAL_NOTES[name] + (name === 'busy' && prefetched ? '; ' + prefetched + ' more claimed ahead wait for a slot' : '') },
        kit.el('b', {}, count(value)), ' ' + name)));
    strip.hidden = false;
  }

  // ---- the history chart ----

  function label(ms, intervalMs) {
    return intervalMs >= 86400000 ? window.emqActions.day(ms) : window.emqActions.when(ms);
  }

  // Each interval's bar: completed at the bottom, failed (retried) above
  // it, dead on top; an interval with no samples has no bar (a gap).
  function chart(data) {
    const span = Math.max(1, data.to_ms - data.from_ms);
    const slot = ((W - 2 * PAD) * data.interval_ms) / span;
    const top = Math.max(1, ...data.points.map((p) => p.completed + p.failed + p.dead));
    const root = svg('svg', { class: 'history-chart wide', width: W, height: H, viewBox: '0 0 ' + W + ' ' + H,
                              role: 'img', 'data-points': data.points.length,
                              'aria-label': 'completed, failed and dead per ' + (data.interval_ms >= 86400000 ? 'day' : 'minute') });
    root.appendChild(svg('rect', { class: 'frame', x: 0, y: 0, width: W, height: H }));
    for (const p of data.points) {
      const x = PAD + ((p.t - data.from_ms) / span) * (W - 2 * PAD);
      const bar = svg('g', { 'data-t': p.t });
      let y = H - PAD;
      for (const [cls, value] of [['completed', p.completed], ['failed', p.failed], ['dead', p.dead]]) {
        if (value <= 0) continue;
        const h = (value / top) * (H - 2 * PAD);
        y -= h;
        bar.appendChild(svg('rect', { class: cls, x: x.toFixed(2), y: y.toFixed(2),
                                       width: Math.max(0.5, slot * 0.9).toFixed(2), height: h.toFixed(2) }));
      }
      const title = svg('title', {});
      title.textContent = label(p.t, data.interval_ms) + ': ' + p.completed + ' completed, ' + p.failed +
        ' failed, ' + p.dead + ' dead, ' + p.claimed + ' claimed';
      bar.appendChild(title);
      root.appendChild(bar);
    }
    const scale = svg('text', { x: PAD + 4, y: 12, class: 'scale' });
    scale.textContent = count(top) + ' per ' + (data.interval_ms >= 86400000 ? 'day' : 'minute');
    root.appendChild(scale);
    return root;
  }

  function sums(kit, data) {
    const total = { completed: 0, failed: 0, dead: 0, claimed: 0 };
    for (const p of data.points) for (const k of Object.keys(total)) total[k] += p[k];
    return kit.el('p', { class: 'muted history-sums' },
      Object.entries(total).map(([k, v], i) => [i ? ' · ' : '', kit.el('span', { 'data-sum': k, class: 'sum-' + k }, count(v)), ' ' + k]),
      ' · from ', label(data.from_ms, data.interval_ms), ' to ', label(data.to_ms, data.interval_ms));
  }

  function draw(kit, c, data) {
    const buttons = RANGES.map((r) => kit.el('button', {
      type: 'button', class: r === c.range ? 'current' : null, 'aria-pressed': r === c.range ? 'true' : 'false',
      'data-range': r, onclick: () => { c.range = r; load(kit, c); },
    }, r));
    const body = data.points.length ? [chart(data), window.emqGlance.legend(kit,
      [['completed', 'completed'], ['failed', 'failed (retried)'], ['dead', 'dead']]), sums(kit, data)]
      : [kit.el('p', { class: 'muted', id: 'history-empty' },
        'No history in this range yet: every emqd writes a sample each minute (docs/web.md, "History").')];
    c.node.replaceChildren(kit.el('h3', {}, c.queue === null ? 'History, every queue' : 'History'),
      kit.el('div', { class: 'ranges' }, buttons), ...body);
    c.node.setAttribute('data-range', data.range);
  }

  // The last hour of a day's answer: the 1h answer, without a second read.
  function lastHour(data) {
    const from = data.to_ms - 60 * data.interval_ms;
    return Object.assign({}, data, { range: '1h', from_ms: from, points: data.points.filter((p) => p.t >= from) });
  }

  async function load(kit, c) {
    c.readAt = Date.now();
    const range = c.range || '24h';
    const path = '/api/history?range=' + encodeURIComponent(range) +
      (c.queue === null ? '' : '&queue=' + encodeURIComponent(c.queue));
    try {
      let data = await kit.api(path);
      // Until one is chosen: a day, or the last hour when that is all the
      // history there is (a young queue), so today's work is not a sliver.
      if (!c.range) {
        c.range = data.points.every((p) => p.t >= data.to_ms - 60 * data.interval_ms) ? '1h' : '24h';
        if (c.range === '1h') data = lastHour(data);
      }
      draw(kit, c, data);
    } catch (e) {
      c.readAt = 0;
      if (!e.shown) c.node.replaceChildren(kit.el('p', { class: 'err' }, 'History cannot be read: ' + e.message));
    }
  }

  // The history section of the overview (queue null) or of a queue's page:
  // the same node on every redraw, read again when its samples may have moved.
  function section(kit, queue) {
    const key = queue === null ? '' : 'q:' + queue;
    let c = charts[key];
    if (!c) {
      c = charts[key] = { queue: queue, range: null, readAt: 0,
                          node: kit.el('section', { class: 'history', id: 'history' }) };
    }
    if (Date.now() - c.readAt >= CHART_READ_MS) load(kit, c);
    return c.node;
  }

  return { totals, section };
})();
