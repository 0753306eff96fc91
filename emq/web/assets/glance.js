// emq web's first glance on the overview: each queue's last ten minutes and
// its completed/min, read from the server's per-minute history
// (/api/history/recent: the same on every tab and after a reload); a
// realtime chart of what finishes, per second, fed by the overview's live
// stream; and the server panel (/api/server: INFO, bounded, read-only).
// app.js and lists.js call these with the page's kit; values from the
// server reach the document as text only.
'use strict';

window.emqGlance = (function () {
  const RECENT_READ_MS = 30000;  // a sample comes once a minute
  const SERVER_READ_MS = 30000;
  const REALTIME_S = 120;        // seconds the realtime chart shows
  let recent = null;
  let recentAt = 0;

  function svg(tag, attrs) {
    const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
    for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
    return node;
  }

  function titled(node, text) {
    const t = svg('title', {});
    t.textContent = text;
    node.appendChild(t);
    return node;
  }

  // Reads /api/history/recent when what is held is older than RECENT_READ_MS;
  // the overview draws with what it holds meanwhile.
  async function loadRecent(kit) {
    if (recent && Date.now() - recentAt < RECENT_READ_MS) return recent;
    try {
      recent = await kit.api('/api/history/recent');
      recentAt = Date.now();
    } catch (e) {
      if (!recent) recent = null;
    }
    return recent;
  }

  // The minute points of one queue, one per minute of the window (a minute
  // without samples is null: a gap).
  function minutes(queue) {
    if (!recent) return [];
    const by = new Map((recent.queues[queue] || []).map((p) => [p.t, p]));
    const out = [];
    for (let t = recent.from_ms; t < recent.to_ms; t += recent.interval_ms) out.push([t, by.get(t) || null]);
    return out;
  }

  // Completed (or died: dead) in the last whole minute; null without its sample.
  function perMinute(queue, field) {
    if (!recent) return null;
    const last = recent.to_ms - 2 * recent.interval_ms;
    const p = minutes(queue).find(([t]) => t === last);
    return p && p[1] ? p[1][field] : null;
  }

  // Each minute a bar pair: completed (green, left) and died (red, right).
  function spark(queue) {
    const w = 160, h = 36;
    const root = svg('svg', { class: 'chart', width: w, height: h, viewBox: '0 0 ' + w + ' ' + h, role: 'img',
                              'aria-label': 'completed and died per minute, last 10 minutes' });
    root.appendChild(svg('rect', { class: 'frame', x: 0, y: 0, width: w, height: h }));
    const list = minutes(queue);
    if (!list.length) return root;
    const top = Math.max(1, ...list.map(([, p]) => (p ? Math.max(p.completed, p.dead) : 0)));
    const slot = (w - 2) / list.length;
    const when = window.emqActions.when;
    list.forEach(([t, p], i) => {
      const g = svg('g', { 'data-t': t, 'data-completed': p ? p.completed : '', 'data-dead': p ? p.dead : '' });
      for (const [value, dx, cls] of [[p ? p.completed : 0, 0, 'completed'], [p ? p.dead : 0, slot / 2, 'dead']]) {
        if (value <= 0) continue;
        const bar = (value / top) * (h - 4);
        g.appendChild(svg('rect', { class: cls, x: (1 + i * slot + dx).toFixed(1), y: (h - 2 - bar).toFixed(1),
                                    width: Math.max(0.5, slot / 2 - 0.5).toFixed(1), height: bar.toFixed(1) }));
      }
      root.appendChild(titled(g, when(t) + ': ' + (p ? p.completed + ' completed, ' + p.dead + ' died' : 'no sample')));
    });
    return root;
  }

  // ---- realtime: what the live stream says finishes, per second ----

  const seconds = new Map();  // epoch second -> [processed, failed]
  let rt = null;

  // One entry of the overview's stream: a completion, or a failed attempt
  // (an entry with an error: retried, or dead).
  function count(entry) {
    const processed = entry.event === 'completed';
    const failed = !processed && (entry.event === 'dead' || entry.error !== undefined);
    if (!processed && !failed) return;
    const s = Math.floor(Date.now() / 1000);
    const c = seconds.get(s) || [0, 0];
    c[processed ? 0 : 1]++;
    seconds.set(s, c);
  }

  function drawRealtime() {
    if (!rt || !rt.node.isConnected) return;
    const W = 720, H = 90, now = Math.floor(Date.now() / 1000);
    for (const s of seconds.keys()) if (s <= now - REALTIME_S) seconds.delete(s);
    const series = [];
    for (let s = now - REALTIME_S + 1; s <= now; s++) series.push(seconds.get(s) || [0, 0]);
    const top = Math.max(1, ...series.map((c) => Math.max(c[0], c[1])));
    const x = (i) => (2 + (i / (REALTIME_S - 1)) * (W - 4)).toFixed(1);
    const y = (v) => (H - 2 - (v / top) * (H - 16)).toFixed(1);
    const root = svg('svg', { class: 'wide', width: W, height: H, viewBox: '0 0 ' + W + ' ' + H, role: 'img',
                              'aria-label': 'processed and failed per second, last two minutes' });
    root.appendChild(svg('rect', { class: 'frame', x: 0, y: 0, width: W, height: H }));
    for (const [k, cls] of [[0, 'line-processed'], [1, 'line-failed']]) {
      root.appendChild(svg('polyline', { class: cls, points: series.map((c, i) => x(i) + ',' + y(c[k])).join(' ') }));
    }
    const scale = svg('text', { x: 6, y: 12, class: 'scale' });
    scale.textContent = top + ' per second';
    root.appendChild(scale);
    const sum = series.reduce((a, c) => [a[0] + c[0], a[1] + c[1]], [0, 0]);
    rt.chart.replaceChildren(root);
    rt.sums.textContent = sum[0] + ' processed, ' + sum[1] + ' failed in the last ' + REALTIME_S / 60 + ' minutes';
    rt.sums.setAttribute('data-processed', sum[0]);
    rt.sums.setAttribute('data-failed', sum[1]);
  }

  function legend(kit, pairs) {
    return kit.el('div', { class: 'legend' }, pairs.map(([cls, word]) => [kit.el('span', { class: 'key ' + cls }), word]));
  }

  // The overview's realtime section, kept across redraws.
  function realtime(kit) {
    if (!rt) {
      rt = { node: kit.el('section', { class: 'realtime', id: 'realtime' }), chart: kit.el('div', {}),
             sums: kit.el('p', { class: 'muted', id: 'realtime-sums' }) };
      const how = window.emqPrefs.live
        ? 'from the live stream of the queues that keep events, since this page opened'
        : 'off: the page was opened with ?live=0';
      rt.node.replaceChildren(kit.el('h3', {}, 'Realtime'),
        legend(kit, [['line-processed', 'processed (completed)'], ['line-failed', 'failed (attempts that failed, deaths)']]),
        rt.chart, rt.sums, kit.el('p', { class: 'muted' }, 'Per second, ' + how + '.'));
      if (window.emqPrefs.live) setInterval(drawRealtime, 1000);
    }
    setTimeout(drawRealtime, 0);
    return rt.node;
  }

  // ---- the server panel ----

  const panel = { node: null, readAt: 0 };

  function bytes(n) {
    if (n === null || n === undefined) return '–';
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let v = n, u = 0;
    while (v >= 1024 && u < units.length - 1) { v /= 1024; u++; }
    return (u ? v.toFixed(1) : String(v)) + ' ' + units[u];
  }

  function days(s) {
    if (s === null || s === undefined) return '–';
    return s < 86400 ? Math.floor(s / 3600) + ' h ' + Math.floor((s % 3600) / 60) + ' min' : Math.floor(s / 86400) + ' days';
  }

  function drawServer(kit, d) {
    const rows = [
      ['Valkey', (d.version || '?') + ' · ' + (d.mode || '?') +
        (d.cluster_primaries ? ' (' + d.cluster_primaries + ' primaries; this is the node emq web asked)' : '')],
      ['up', days(d.uptime_s)],
      ['clients', (d.connected_clients ?? '?') + ' connected of ' + (d.maxclients ?? '?') + ', ' +
        (d.blocked_clients ?? '?') + ' blocked'],
      ['memory', bytes(d.used_memory) + ' used, peak ' + bytes(d.used_memory_peak) + ', maxmemory ' +
        (d.maxmemory ? bytes(d.maxmemory) : 'none')],
      ['maxmemory-policy', d.maxmemory_policy ?? '?'],
      ['emq module', d.module ? 'loaded (version ' + d.module.ver + ')' : 'not loaded: transitions run as scripts'],
      ['emq web runs', d.executor],
    ];
    panel.node.replaceChildren(kit.el('h3', {}, 'Server'), kit.el('dl', { class: 'fields', id: 'server-fields' },
      rows.map(([k, v]) => [kit.el('dt', {}, k), kit.el('dd', { 'data-field': k }, v)])));
  }

  async function loadServer(kit) {
    panel.readAt = Date.now();
    try {
      drawServer(kit, await kit.api('/api/server'));
    } catch (e) {
      panel.readAt = 0;
      if (!e.shown) panel.node.replaceChildren(kit.el('p', { class: 'err' }, 'The server panel cannot be read: ' + e.message));
    }
  }

  function server(kit) {
    if (!panel.node) panel.node = kit.el('section', { class: 'server', id: 'server' });
    if (Date.now() - panel.readAt >= SERVER_READ_MS) loadServer(kit);
    return panel.node;
  }

  return { loadRecent, spark, perMinute, count, realtime, server, legend };
})();
