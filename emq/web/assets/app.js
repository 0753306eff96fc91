// emq web's page: plain JavaScript, no framework, nothing loaded from
// elsewhere. It reads the JSON API of the server that served it (paths in
// docs/web.md), draws the view the address names, and keeps it fresh
// without a reload: a queue's and a job's page follow the queue's events
// stream (server-sent events from /api/events), the others, and a queue
// that keeps no events, refresh every few seconds. Every value from the server reaches the
// document as text (textContent, attribute values through setAttribute):
// never as markup.
'use strict';

(function () {
  const REFRESH_MS = 5000;
  const SAMPLE_WINDOW_MS = 10 * 60 * 1000;  // what a queue's chart shows
  const RATE_WINDOW_MS = 60 * 1000;         // what "per minute" averages over
  const STATES = ['pending', 'active', 'delayed', 'dead'];
  const token = document.querySelector('meta[name="emq-token"]').getAttribute('content');
  const readOnly = document.querySelector('meta[name="emq-read-only"]').getAttribute('content') === 'true';

  let busy = false;  // an action is on its way: no refresh under the user's hand

  // ---- building the document, as text only ----

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (name === 'onclick') node.addEventListener('click', value);
      else if (value !== null && value !== undefined && value !== false) node.setAttribute(name, String(value));
    }
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function svg(tag, attrs) {
    const node = document.createElementNS('http://www.w3.org/2000/svg', tag);
    for (const [name, value] of Object.entries(attrs)) node.setAttribute(name, String(value));
    return node;
  }

  function show(node) {
    const view = document.getElementById('view');
    view.replaceChildren(node);
  }

  function queueHref(q, state, page) {
    let href = '/queues/' + encodeURIComponent(q);
    const query = [];
    if (state) query.push('state=' + encodeURIComponent(state));
    if (page && page > 1) query.push('page=' + page);
    return query.length ? href + '?' + query.join('&') : href;
  }

  // A job's id as one path segment, from its exact bytes: an id that is
  // not UTF-8 comes with id_hex, and its text (with U+FFFD) names no job.
  function idSegment(job) {
    return job.id_hex !== undefined ? job.id_hex.replace(/../g, '%$&') : encodeURIComponent(job.id);
  }

  // A path segment as text, for showing: as it stands when its bytes are
  // not UTF-8.
  function segmentText(segment) {
    try {
      return decodeURIComponent(segment);
    } catch (e) {
      return segment;
    }
  }

  function jobHref(q, idSeg) {
    return '/queues/' + encodeURIComponent(q) + '/jobs/' + idSeg;
  }

  function crumbs(...parts) {
    const nav = document.getElementById('crumbs');
    nav.replaceChildren(...parts.flatMap((p, i) => (i ? [' / ', p] : [p])));
  }

  function age(ms) {
    if (ms === null || ms === undefined) return '–';
    const s = Math.floor(ms / 1000);
    if (s < 60) return s + 's';
    const m = Math.floor(s / 60);
    if (m < 60) return m + 'm ' + (s % 60) + 's';
    const h = Math.floor(m / 60);
    if (h < 48) return h + 'h ' + (m % 60) + 'm';
    return Math.floor(h / 24) + 'd ' + (h % 24) + 'h';
  }

  function when(ms) {
    return ms === null || ms === undefined ? '–' : new Date(ms).toISOString().replace('T', ' ').replace('Z', '');
  }

  // {"bytes", "text"|"hex", "truncated"} as text; null as a dash.
  function bytesText(b) {
    if (!b) return '–';
    if (b.unread) return '(' + b.bytes + ' bytes, not read for a preview)';
    if (b.hex !== undefined) return 'hex: ' + b.hex + (b.truncated ? ' …' : '');
    return b.text + (b.truncated ? ' …' : '');
  }

  // ---- talking to the server ----

  function banner(text) {
    const b = document.getElementById('banner');
    b.textContent = text || '';
    b.hidden = !text;
  }

  function notice(text, isError) {
    const n = document.getElementById('notice');
    n.textContent = text || '';
    n.className = isError ? 'notice error' : 'notice';
    n.hidden = !text;
  }

  // The API's answer as JSON; throws with what the page should say. A 503
  // (the server behind emq web is down) and a failed fetch (emq web itself
  // is) both show in the banner until a read succeeds again.
  async function api(path, options) {
    let response;
    try {
      response = await fetch(path, Object.assign({ cache: 'no-store', credentials: 'same-origin' }, options || {}));
    } catch (e) {
      banner('emq web cannot be reached (' + e.message + '); retrying every ' + REFRESH_MS / 1000 + ' s');
      e.shown = true;
      throw e;
    }
    let body = {};
    try {
      body = await response.json();
    } catch (e) {
      body = { error: 'the answer was not JSON (HTTP ' + response.status + ')' };
    }
    if (response.status === 503 || body.server_unreachable) {
      banner('The server cannot be reached: ' + (body.error || 'HTTP ' + response.status) + '. Retrying every ' +
             REFRESH_MS / 1000 + ' s.');
      const e = new Error(body.error || 'unreachable');
      e.shown = true;
      throw e;
    }
    if (!options || options.method !== 'POST') banner('');
    if (!response.ok) {
      const e = new Error(body.error || 'HTTP ' + response.status);
      e.status = response.status;
      throw e;
    }
    return body;
  }

  async function act(path, done) {
    busy = true;
    try {
      const body = await api(path, { method: 'POST', headers: { 'X-EMQ-Token': token } });
      notice(done(body), false);
    } catch (e) {
      if (!e.shown) notice('Refused: ' + e.message, true);
    } finally {
      busy = false;
      refresh();
    }
  }

  function button(label, onclick, danger) {
    return el('button', { type: 'button', class: danger ? 'danger' : null, onclick: onclick }, label);
  }

  // What fleet.js (the daemons, the Pause form) draws with.
  const kit = {
    el, api, act, button, notice, crumbs, show, token, readOnly, jobHref, idSegment, bytesText,
    refresh: () => refresh(),
    hold: (on) => { busy = on; },
  };

  function pauseButton(q) {
    return window.emqFleet.pauseControl(kit, q);
  }

  function retryAllButton(q) {
    if (readOnly || q.dead === 0) return null;
    return button('Retry all dead', () => {
      if (!window.confirm('Retry all ' + q.dead + ' dead jobs of ' + q.queue + '?')) return;
      act('/api/queues/' + encodeURIComponent(q.queue) + '/retry-dead', (b) => 'Moved ' + b.moved + ' dead jobs to pending');
    }, true);
  }

  function jobButtons(q, id, idSeg, state) {
    if (readOnly) return [];
    const base = '/api/queues/' + encodeURIComponent(q) + '/jobs/' + idSeg;
    const out = [];
    if (state === 'dead') out.push(button('Retry', () => act(base + '/retry', () => 'Retried ' + id)));
    // cancel refuses these two: a running job, and a parent waiting for its children.
    if (state !== 'active' && state !== 'waiting') {
      out.push(button('Cancel', () => {
        if (window.confirm('Delete job ' + id + ' and its row?')) act(base + '/cancel', () => 'Cancelled ' + id);
      }, true));
    }
    return out;
  }

  // ---- samples the page keeps for rates and charts ----

  function loadSamples() {
    try {
      return JSON.parse(sessionStorage.getItem('emq-samples') || '{}');
    } catch (e) {
      return {};
    }
  }

  function addSample(q, now) {
    const all = loadSamples();
    const list = (all[q.queue] || []).filter((s) => now - s[0] <= SAMPLE_WINDOW_MS);
    const c = q.counters || {};
    list.push([now, c.completed || 0, c.dead || 0, q.pending]);
    all[q.queue] = list;
    try {
      sessionStorage.setItem('emq-samples', JSON.stringify(all));
    } catch (e) {
      // Full storage only costs the history.
    }
    return list;
  }

  // Per minute over the last minute of samples; null until there are two.
  function perMinute(list, column) {
    const last = list[list.length - 1];
    const first = list.find((s) => last[0] - s[0] <= RATE_WINDOW_MS) || last;
    if (!last || last[0] === first[0]) return null;
    return Math.max(0, ((last[column] - first[column]) * 60000) / (last[0] - first[0]));
  }

  function rate(v) {
    return v === null ? '–' : v < 10 ? v.toFixed(1) : String(Math.round(v));
  }

  // Completed (green) and died (red) per minute between samples, pending
  // (dashed) scaled apart; drawn here, from the samples above.
  function chart(list) {
    const w = 160, h = 36;
    const root = svg('svg', { class: 'chart', width: w, height: h, viewBox: '0 0 ' + w + ' ' + h, role: 'img' });
    root.appendChild(svg('rect', { x: 0, y: 0, width: w, height: h, fill: '#fafbfc', stroke: '#dde1e8' }));
    if (list.length < 2) return root;
    // From the first sample kept (at most the window ago) to the last.
    const t1 = list[list.length - 1][0], t0 = Math.max(list[0][0], t1 - SAMPLE_WINDOW_MS);
    const x = (t) => ((t - t0) / Math.max(1, t1 - t0)) * (w - 2) + 1;
    const pendingTop = Math.max(1, ...list.map((s) => s[3]));
    root.appendChild(svg('polyline', { class: 'pending', points: list.map((s) =>
      x(s[0]).toFixed(1) + ',' + (h - 2 - (s[3] / pendingTop) * (h - 4)).toFixed(1)).join(' ') }));
    // Between two samples, a bar each: completed (left half) and died
    // (right half) per minute, on one scale.
    const rates = [];
    for (let i = 1; i < list.length; i++) {
      const dt = Math.max(1, list[i][0] - list[i - 1][0]) / 60000;
      rates.push([list[i - 1][0], list[i][0], Math.max(0, (list[i][1] - list[i - 1][1]) / dt),
                  Math.max(0, (list[i][2] - list[i - 1][2]) / dt)]);
    }
    const top = Math.max(1, ...rates.map((r) => Math.max(r[2], r[3])));
    for (const [from, to, completed, died] of rates) {
      const x0 = x(from), half = Math.max(0.5, (x(to) - x0) / 2);
      for (const [value, left, cls] of [[completed, x0, 'completed'], [died, x0 + half, 'dead']]) {
        if (value <= 0) continue;
        const bar = (value / top) * (h - 4);
        root.appendChild(svg('rect', { class: cls, x: left.toFixed(1), y: (h - 2 - bar).toFixed(1),
                                        width: half.toFixed(1), height: bar.toFixed(1) }));
      }
    }
    const title = svg('title', {});
    title.textContent = 'last 10 minutes: completed/min (green), died/min (red), pending (dashed)';
    root.appendChild(title);
    return root;
  }

  // ---- limits, schedules and flows ----

  function rateText(r) {
    return r.max + ' per ' + (r.window_ms % 1000 === 0 ? r.window_ms / 1000 + ' s' : r.window_ms + ' ms');
  }

  // The overview's cell: the limits in short, and "held back" with why.
  function limitsCell(l) {
    if (!l) return '–';
    if (l.broken) return el('span', { class: 'held', title: l.broken }, 'broken');
    const parts = [];
    if (l.max_active !== null) parts.push('max ' + l.max_active + ' active');
    if (l.rate) parts.push(rateText(l.rate));
    return [parts.join(' · '), l.held_back ? [' ', el('span', { class: 'held', title: l.held_back }, 'held back')] : null];
  }

  // The queue page's section: each limit, the bucket, and what holds the
  // queue back now, if anything.
  function limitsSection(q) {
    const l = q.limits;
    if (!l) return null;
    const rows = [];
    const add = (term, ...value) => rows.push(el('dt', {}, term), el('dd', {}, ...value));
    if (l.broken) {
      add('broken', l.broken, ' (claims stop until it is mended: emq limit ' + q.queue + ' …)');
    } else {
      add('max_active', l.max_active === null ? 'off' : l.max_active + ' (active now ' + q.active + ')');
      add('rate', l.rate ? rateText(l.rate) : 'off');
      if (l.rate) {
        add('bucket', l.tokens + ' of ' + l.rate.max + ' tokens' +
          (l.ms_to_token !== null ? ', next in ' + l.ms_to_token + ' ms' : ''));
      }
    }
    add('now', l.held_back ? el('span', { class: 'held' }, 'held back: ' + l.held_back) : 'not held back');
    return [el('h3', {}, 'Limits'), el('dl', { class: 'fields', id: 'limits' }, rows)];
  }

  function schedulesSection(name, list) {
    if (!list || !list.length) return null;
    const head = el('tr', {}, ['Schedule', 'Definition', 'Last fire', 'Last job', 'Next fire'].map((t) => el('th', {}, t)),
      el('th', { class: 'num' }, 'Missed'));
    const rows = list.map((s) => el('tr', { 'data-schedule': s.name },
      el('td', {}, s.name, s.problem ? el('div', { class: 'err' }, s.problem) : null),
      el('td', {}, s.described), el('td', {}, when(s.last_fire_ms)),
      el('td', { class: 'id' }, s.last_job === null ? '–'
        : el('a', { href: jobHref(name, idSegment({ id: s.last_job, id_hex: s.last_job_hex })) }, s.last_job)),
      el('td', {}, when(s.next_fire_ms)), el('td', { class: 'num' }, s.missed)));
    return [el('h3', {}, 'Schedules'), el('table', { id: 'schedules' }, el('thead', {}, head), el('tbody', {}, rows))];
  }

  function jobLink(j) {
    return el('a', { href: jobHref(j.queue, idSegment(j)) }, j.queue + ' / ' + j.id);
  }

  // A child's parent and a parent's children, each linked with its state.
  function flowSection(data) {
    const out = [];
    if (data.parent) {
      out.push(el('h3', {}, 'Parent'), el('p', { id: 'parent' }, jobLink(data.parent), ' · ',
        data.parent.state === null ? el('span', { class: 'held' }, 'row gone') : data.parent.state));
    }
    if (data.children) {
      out.push(el('h3', {}, 'Children'));
      if (data.orphans) {
        out.push(el('p', { class: 'notice error', id: 'orphans' }, data.orphans === 1
          ? 'Orphaned: this parent waits on a child that can no longer tell it; nothing will release it (docs/operations.md, "Flow orphans").'
          : 'Orphaned: this parent waits on ' + data.orphans + ' children that can no longer tell it; nothing will release it (docs/operations.md, "Flow orphans").'));
      }
      if (!data.children.length) {
        out.push(el('p', { class: 'muted' }, 'No children listed: a parent that has run keeps no list of them.'));
      } else {
        const head = el('tr', {}, ['Child', 'State', 'Parent'].map((t) => el('th', {}, t)));
        const rows = data.children.map((c) => el('tr', { 'data-child': c.queue + ':' + c.id, class: c.orphan ? 'orphan' : null },
          el('td', { class: 'id' }, jobLink(c)),
          el('td', {}, c.state === null ? 'row gone' : c.state,
            c.orphan ? [' · ', el('span', { class: 'held' }, 'orphan: ' + c.orphan)] : null),
          el('td', {}, c.told ? 'told: ' + c.told : c.awaited ? 'awaits it' : '–')));
        out.push(el('table', { id: 'children' }, el('thead', {}, head), el('tbody', {}, rows)));
      }
    }
    return out;
  }

  // ---- the views ----

  async function overview() {
    crumbs(el('span', {}, 'queues'));
    const data = await api('/api/queues');
    const now = Date.now();
    const head = el('tr', {}, el('th', {}, 'Queue'), el('th', {}, 'State'),
      ...['Pending', 'Active', 'Delayed', 'Dead', 'Completed/min', 'Died/min', 'Oldest pending'].map((t) => el('th', { class: 'num' }, t)),
      el('th', {}, 'Limits'), el('th', {}, 'Last 10 minutes'), readOnly ? null : el('th', {}, ''));
    const rows = data.queues.map((q) => {
      const samples = addSample(q, now);
      return el('tr', { 'data-queue': q.queue },
        el('td', {}, el('a', { href: queueHref(q.queue) }, q.queue)),
        el('td', {}, window.emqFleet.stateCell(kit, q)),
        el('td', { class: 'num' }, q.pending), el('td', { class: 'num' }, q.active),
        el('td', { class: 'num' }, q.delayed),
        el('td', { class: 'num' }, q.dead ? el('a', { href: queueHref(q.queue, 'dead') }, q.dead) : '0'),
        el('td', { class: 'num' }, rate(perMinute(samples, 1))),
        el('td', { class: 'num' }, rate(perMinute(samples, 2))),
        el('td', { class: 'num' }, age(q.oldest_pending_age_ms)),
        el('td', { class: 'limits' }, limitsCell(q.limits)),
        el('td', {}, chart(samples)),
        readOnly ? null : el('td', {}, pauseButton(q)));
    });
    const parts = [el('table', { id: 'queues' }, el('thead', {}, head), el('tbody', {}, rows))];
    if (!data.queues.length) parts.push(el('p', { class: 'muted' }, 'No queues are known yet ({emq}:queues is empty).'));
    if (data.skipped.length) {
      parts.push(el('p', { class: 'muted' }, 'Skipped names that are not valid queue names: ' + data.skipped.join(', ')));
    }
    parts.push(window.emqHistory.section(kit, null));
    show(el('div', {}, parts));
  }

  async function queueView(name) {
    const params = new URLSearchParams(location.search);
    const state = STATES.includes(params.get('state')) ? params.get('state') : 'pending';
    const page = Math.max(1, parseInt(params.get('page') || '1', 10) || 1);
    crumbs(el('a', { href: '/' }, 'queues'), el('span', {}, name));
    const data = await api('/api/queues/' + encodeURIComponent(name) + '?state=' + state + '&page=' + page);
    const q = data.queue;
    const tabs = el('div', { class: 'tabs' }, STATES.map((s) =>
      el('a', { href: queueHref(name, s), class: s === state ? 'current' : null, 'data-state': s }, s + ' (' + q[s] + ')')));
    const summary = el('p', {}, q.paused ? el('span', { class: 'paused' }, 'paused') : 'running',
      ' · oldest pending ' + age(q.oldest_pending_age_ms),
      ' · completed ' + (q.counters.completed ?? '?') + ', died ' + (q.counters.dead ?? '?') + ' since the queue began');
    const actions = el('div', { class: 'actions' }, pauseButton(q), state === 'dead' ? retryAllButton(q) : null);
    const timeHead = { pending: 'Lane', active: 'Lease deadline', delayed: 'Due', dead: 'Died' }[state];
    const head = el('tr', {}, el('th', {}, 'ID'), el('th', {}, timeHead), el('th', { class: 'num' }, 'Attempts'),
      el('th', { class: 'num' }, 'Failures'), el('th', {}, 'Error'), el('th', {}, 'Payload'), readOnly ? null : el('th', {}, ''));
    const rows = data.jobs.map((j) => el('tr', { 'data-id': j.id },
      el('td', { class: 'id' }, el('a', { href: jobHref(name, idSegment(j)) }, j.id)),
      el('td', {}, state === 'pending' ? String(j.lane) : when(j.time_ms)),
      el('td', { class: 'num' }, j.attempts), el('td', { class: 'num' }, j.failures),
      el('td', { class: 'err' }, j.error ? bytesText(j.error) : '–'),
      el('td', {}, j.row_found ? bytesText(j.payload) : '(gone)'),
      readOnly ? null : el('td', {}, jobButtons(name, j.id, idSegment(j), state))));
    const first = (data.page - 1) * data.page_size;
    const pager = el('div', { class: 'pager' },
      data.page > 1 ? el('a', { href: queueHref(name, state, data.page - 1), rel: 'prev' }, '← newer') : null,
      el('span', {}, data.total ? (first + 1) + '–' + (first + data.jobs.length) + ' of ' + data.total + ' · page ' +
        data.page + ' of ' + data.pages : 'no ' + state + ' jobs'),
      data.page < data.pages ? el('a', { href: queueHref(name, state, data.page + 1), rel: 'next' }, 'older →') : null);
    show(el('div', {}, el('h2', {}, name), summary, window.emqFleet.queueNotes(kit, q), actions, limitsSection(q),
      schedulesSection(name, data.schedules), window.emqHistory.section(kit, name),
      el('h3', {}, 'Jobs'), tabs, pager, el('table', { id: 'jobs' }, el('thead', {}, head), el('tbody', {}, rows))));
  }

  function bytesBlock(label, b, href) {
    if (!b) return [el('h3', {}, label), el('p', { class: 'muted' }, 'none')];
    const note = (b.hex !== undefined ? 'not UTF-8, shown as hex; ' : '') + b.bytes + ' bytes';
    return [el('h3', {}, label + ' '), el('p', { class: 'muted' }, note,
      b.truncated ? [' · truncated · ', el('a', { href: href }, 'the whole ' + label)] : null),
      el('pre', { class: 'bytes', 'data-field': label }, b.hex !== undefined ? b.hex : b.text)];
  }

  // idSeg: the id's segment of the address as it stands, still encoded,
  // so the API gets the id's exact bytes back.
  async function jobView(name, idSeg) {
    crumbs(el('a', { href: '/' }, 'queues'), el('a', { href: queueHref(name) }, name), el('span', {}, segmentText(idSeg)));
    const base = '/api/queues/' + encodeURIComponent(name) + '/jobs/' + idSeg;
    let data;
    try {
      data = await api(base);
    } catch (e) {
      if (e.status === 404) {
        show(el('p', {}, e.message));
        return;
      }
      throw e;
    }
    const fields = el('dl', { class: 'fields' }, el('dt', {}, 'state'), el('dd', {}, data.state ?? '–'),
      Object.entries(data.fields).filter(([k]) => k !== 'state').map(([k, v]) => [el('dt', {}, k), el('dd', {}, bytesText(v))]));
    const id = data.id + (data.id_hex !== undefined ? ' (not UTF-8; bytes ' + data.id_hex + ')' : '');
    show(el('div', {}, el('h2', { class: 'id' }, id), el('div', { class: 'actions' }, jobButtons(name, id, idSeg, data.state)), fields,
      flowSection(data), bytesBlock('payload', data.payload, base + '/payload'), bytesBlock('error', data.error, base + '/error'),
      bytesBlock('result', data.result, base + '/result'), eventsSection(data)));
  }

  // A job's events, oldest first: when, what, the attempt, and its error or progress.
  function eventsSection(data) {
    if (!data.keeps_events) return el('p', { class: 'muted' }, 'This queue keeps no events (its meta has no events length).');
    if (!data.events.length) return el('p', { class: 'muted' }, 'No events of this job among the stream\'s latest.');
    const rows = data.events.map((e) => el('tr', {},
      el('td', {}, when(Number(e.entry.split('-')[0]))), el('td', {}, e.event), el('td', {}, e.attempt),
      el('td', {}, e.error ? bytesText(e.error) : e.progress ? bytesText(e.progress) : '')));
    return el('div', {}, el('h3', {}, 'Events'),
      el('table', {}, el('thead', {}, el('tr', {}, el('th', {}, 'when'), el('th', {}, 'event'), el('th', {}, 'attempt'),
        el('th', {}, 'error or progress'))), el('tbody', {}, rows)));
  }

  // ---- which view, and keeping it fresh ----

  function route() {
    // Segments stay encoded until used: a job id's may hold bytes that are
    // not UTF-8, which decodeURIComponent refuses.
    const parts = location.pathname.split('/').filter((p) => p !== '');
    if (parts.length === 1 && parts[0] === 'daemons') return () => window.emqFleet.daemonsView(kit);
    if (parts.length === 1 && parts[0] === 'search') return () => window.emqSearch.view(kit);
    if (parts.length === 2 && parts[0] === 'queues') return () => queueView(segmentText(parts[1]));
    if (parts.length === 4 && parts[0] === 'queues' && parts[2] === 'jobs') {
      return () => jobView(segmentText(parts[1]), parts[3]);
    }
    return overview;
  }

  const view = route();

  async function refresh() {
    if (busy) return;
    try {
      window.emqHistory.totals(kit);
      await view();
      document.getElementById('updated').textContent = 'updated ' + new Date().toLocaleTimeString();
    } catch (e) {
      if (!e.shown && e.message && !document.getElementById('banner').textContent) notice(e.message, true);
    }
  }

  // The queue a page follows live, or null (the overview polls).
  function liveQueue() {
    const parts = location.pathname.split('/').filter((p) => p !== '');
    return parts.length >= 2 && parts[0] === 'queues' ? segmentText(parts[1]) : null;
  }

  // Redraws on the queue's events, at most every 250 ms; polls while the
  // queue keeps no events or the stream is down.
  let polling = null;
  function poll(on) {
    if (on && !polling) polling = setInterval(refresh, REFRESH_MS);
    if (!on && polling) { clearInterval(polling); polling = null; }
  }
  function follow(q) {
    if (q === null || typeof EventSource === 'undefined') return poll(true);
    const source = new EventSource('/api/events?queue=' + encodeURIComponent(q));
    let pending = null;
    const soon = () => { if (!pending) pending = setTimeout(() => { pending = null; refresh(); }, 250); };
    source.addEventListener('ready', () => { poll(false); document.body.setAttribute('data-live', 'true'); });
    source.addEventListener('job', soon);
    source.addEventListener('off', () => { source.close(); poll(true); });
    source.addEventListener('trouble', () => poll(true));
    source.onerror = () => { document.body.removeAttribute('data-live'); poll(true); };
  }

  document.getElementById('search-slot').appendChild(window.emqSearch.headerBox(kit, liveQueue()));
  refresh();
  poll(true);
  follow(liveQueue());
})();
