// emq web's page: plain JavaScript, no framework, nothing loaded from
// elsewhere. It reads the JSON API of the server that served it (paths in
// docs/web.md), draws the view the address names, and keeps it fresh
// without a reload: a queue's and a job's page follow the queue's events
// stream (server-sent events from /api/events), the overview its queues'
// on one stream (lists.js), the others, and a queue that keeps no events,
// refresh every few seconds; "Pause updates" holds every redraw, and
// ?live=0 draws once and follows nothing. Every value from the server
// reaches the document as text (textContent, attribute values through
// setAttribute): never as markup.
'use strict';

(function () {
  const REFRESH_MS = 5000;
  const STATES = ['pending', 'active', 'delayed', 'retries', 'dead', 'waiting'];
  const token = document.querySelector('meta[name="emq-token"]').getAttribute('content');
  const readOnly = document.querySelector('meta[name="emq-read-only"]').getAttribute('content') === 'true';

  let busy = false;  // an action is on its way: no refresh under the user's hand
  let frozen = false;  // the reader paused the live redraw
  let missed = 0;      // redraws held back while paused

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

  // A control as the next redraw will draw it again: its row, and its id,
  // checkbox, link or label.
  function controlKey(e) {
    const row = e.closest('[data-id], [data-queue], [data-schedule], [data-daemon], [data-range]');
    const where = row ? [...row.attributes].filter((a) => a.name.startsWith('data-')).map((a) => a.value).join(' ') : '';
    return where + '|' + e.tagName + '|' + (e.id || e.dataset.select || e.getAttribute('href') || e.textContent);
  }

  // Every table scrolls inside a box of its own: a narrow screen scrolls
  // the table, not the page. The control that had the focus has it again
  // after the redraw, so the keyboard is not thrown back to the top.
  function show(node) {
    for (const table of node.querySelectorAll('table')) {
      if (table.parentElement.classList.contains('scroll')) continue;
      const box = el('div', { class: 'scroll' });
      table.replaceWith(box);
      box.appendChild(table);
    }
    const view = document.getElementById('view');
    const focused = view.contains(document.activeElement) ? controlKey(document.activeElement) : null;
    view.replaceChildren(node);
    if (focused === null) return;
    const again = [...node.querySelectorAll('a, button, input, select, summary')].find((e) => controlKey(e) === focused);
    if (again) again.focus({ preventScroll: true });
  }

  function queueHref(q, state, page, size) {
    let href = '/queues/' + encodeURIComponent(q);
    const query = [];
    if (state) query.push('state=' + encodeURIComponent(state));
    if (page && page > 1) query.push('page=' + page);
    if (size) query.push('size=' + size);
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

  const when = window.emqActions.when;
  const at = window.emqActions.at;

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
      refresh(true);
    }
  }

  function button(label, onclick, danger) {
    return el('button', { type: 'button', class: danger ? 'danger' : null, onclick: onclick }, label);
  }

  // What fleet.js (the daemons, the Pause form) draws with.
  const kit = {
    el, api, act, button, when, at, notice, crumbs, show, token, readOnly, jobHref, idSegment, bytesText,
    rateText: (r) => rateText(r),
    refresh: (force) => refresh(force),
    hold: (on) => { busy = on; },
  };

  function pauseButton(q) {
    return window.emqFleet.pauseControl(kit, q);
  }

  function retryAllButton(q) {
    if (readOnly || q.dead === 0) return null;
    return button('Retry all dead', () => {
      if (!window.confirm('Retry all ' + q.dead + ' dead jobs of ' + q.queue + '?')) return;
      act('/api/queues/' + encodeURIComponent(q.queue) + '/retry-dead', (b) => 'Moved ' + b.moved + ' dead jobs to pending' +
        (b.skipped ? '; ' + b.skipped + ' stayed dead: another live job holds their unique key' : ''));
    }, true);
  }

  function jobButtons(q, id, idSeg, state) {
    if (readOnly) return [];
    const base = '/api/queues/' + encodeURIComponent(q) + '/jobs/' + idSeg;
    const out = [];
    if (state === 'delayed') out.push(window.emqActions.runNow(kit, q, id, idSeg));
    if (state === 'dead') out.push(button('Retry', () => act(base + '/retry', () => 'Retried ' + id)));
    // cancel refuses these two: a running job, and a parent waiting for its
    // children; a kept completed row it would delete.
    if (state !== 'active' && state !== 'waiting' && state !== 'completed') {
      out.push(button('Cancel', () => {
        if (window.confirm('Delete job ' + id + ' and its row?')) act(base + '/cancel', () => 'Cancelled ' + id);
      }, true));
    }
    return out;
  }

  function rate(v) {
    return v === null ? '–' : String(v);
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
    if (!l) return [el('h3', {}, 'Limits'), el('p', { class: 'muted', id: 'limits' }, 'none'), window.emqActions.limitsForm(kit, q)];
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
    return [el('h3', {}, 'Limits'), el('dl', { class: 'fields', id: 'limits' }, rows), window.emqActions.limitsForm(kit, q)];
  }

  function schedulesSection(name, list) {
    if (!list || !list.length) return null;
    const head = el('tr', {}, ['Schedule', 'Definition', 'Group', 'Last fire', 'Last job', 'Next fire'].map((t) => el('th', {}, t)),
      el('th', { class: 'num' }, 'Missed'), readOnly ? null : el('th', {}, ''));
    const rows = list.map((s) => el('tr', { 'data-schedule': s.name },
      el('td', {}, s.name, s.problem ? el('div', { class: 'err' }, s.problem) : null),
      el('td', {}, s.described), el('td', {}, s.group === null || s.group === undefined ? '–' : s.group),
      el('td', {}, at(s.last_fire_ms)),
      el('td', { class: 'id' }, s.last_job === null ? '–'
        : el('a', { href: jobHref(name, idSegment({ id: s.last_job, id_hex: s.last_job_hex })) }, s.last_job)),
      el('td', {}, at(s.next_fire_ms)), el('td', { class: 'num' }, s.missed),
      el('td', {}, window.emqActions.fireNow(kit, name, s.name))));
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
    const [data] = await Promise.all([api('/api/queues'), window.emqGlance.loadRecent(kit)]);
    const glance = window.emqGlance;
    const head = el('tr', {}, el('th', {}, 'Queue'), el('th', {}, 'State'),
      ...['Pending', 'Active', 'Delayed', 'Dead', 'Waiting', 'Completed/min', 'Died/min', 'Oldest pending'].map((t) => el('th', { class: 'num' }, t)),
      el('th', {}, 'Limits'), el('th', {}, 'Last 10 minutes'), readOnly ? null : el('th', {}, ''));
    const rows = data.queues.map((q) => el('tr', { 'data-queue': q.queue },
      el('td', {}, el('a', { href: queueHref(q.queue) }, q.queue)),
      el('td', {}, window.emqFleet.stateCell(kit, q)),
      el('td', { class: 'num' }, q.pending), el('td', { class: 'num' }, q.active),
      el('td', { class: 'num' }, q.delayed),
      el('td', { class: 'num' }, q.dead ? el('a', { href: queueHref(q.queue, 'dead') }, q.dead) : '0'),
      el('td', { class: 'num' }, q.waiting ? el('a', { href: queueHref(q.queue, 'waiting') }, q.waiting) : '0'),
      el('td', { class: 'num', title: 'completed in the last whole minute (server history)' }, rate(glance.perMinute(q.queue, 'completed'))),
      el('td', { class: 'num', title: 'died in the last whole minute (server history)' }, rate(glance.perMinute(q.queue, 'dead'))),
      el('td', { class: 'num' }, age(q.oldest_pending_age_ms)),
      el('td', { class: 'limits' }, limitsCell(q.limits)),
      el('td', {}, glance.spark(q.queue)),
      readOnly ? null : el('td', {}, pauseButton(q))));
    const parts = [el('table', { id: 'queues' }, el('thead', {}, head), el('tbody', {}, rows)),
      glance.legend(kit, [['completed', 'completed'], ['dead', 'died']]),
      el('span', { class: 'legend' }, ' per minute in the last 10 minutes, from the history emqd writes on the server')];
    if (!data.queues.length) parts.push(el('p', { class: 'muted' }, 'No queues are known yet ({emq}:queues is empty).'));
    if (data.skipped.length) {
      parts.push(el('p', { class: 'muted' }, 'Skipped names that are not valid queue names: ' + data.skipped.join(', ')));
    }
    parts.push(glance.realtime(kit), window.emqHistory.section(kit, null), glance.server(kit));
    show(el('div', {}, parts));
    if (window.emqPrefs.live) window.emqLists.followOverview(kit, data.queues.map((q) => q.queue), { poll });
  }

  // The list's pager: where it is, the page size, and a jump to a page.
  function pager(name, state, data) {
    const first = (data.page - 1) * data.page_size;
    const size = el('select', { 'aria-label': 'jobs per page', id: 'page-size' },
      window.emqPrefs.SIZES.map((n) => el('option', { value: n, selected: n === data.page_size }, n + ' a page')));
    size.addEventListener('change', () => {
      const n = Number(size.value);
      window.emqPrefs.rememberPageSize(n);
      location.assign(queueHref(name, state, Math.floor(first / n) + 1, n));
    });
    const jump = el('input', { type: 'number', min: 1, max: data.pages, value: data.page, 'aria-label': 'page number', id: 'page-jump' });
    const go = () => {
      const n = Math.min(data.pages, Math.max(1, parseInt(jump.value, 10) || 1));
      location.assign(queueHref(name, state, n, data.page_size));
    };
    jump.addEventListener('keydown', (e) => { if (e.key === 'Enter') go(); });
    const scanned = data.scanned !== undefined && data.scanned < data.delayed
      ? ' (' + data.scanned + ' of ' + data.delayed + ' delayed jobs read)' : '';
    return el('div', { class: 'pager' },
      data.page > 1 ? el('a', { href: queueHref(name, state, data.page - 1, data.page_size), rel: 'prev' }, '← newer') : null,
      el('span', { id: 'page-where' }, data.total ? (first + 1) + '–' + (first + data.jobs.length) + ' of ' + data.total + ' · page ' +
        data.page + ' of ' + data.pages + scanned : 'no ' + (state === 'retries' ? 'retrying' : state) + ' jobs' + scanned),
      data.page < data.pages ? el('a', { href: queueHref(name, state, data.page + 1, data.page_size), rel: 'next' }, 'older →') : null,
      size, data.pages > 1 ? el('span', {}, el('label', {}, 'page ', jump), ' ', button('Go', go)) : null);
  }

  // The time column: when the job's state ends or began.
  const TIME_HEAD = { pending: 'Lane', active: 'Lease deadline', delayed: 'Due', retries: 'Next retry at', dead: 'Died',
                      waiting: 'Waiting since' };

  function jobsTable(name, state, data) {
    const select = window.emqSelect;
    const picking = select.offers(kit, state);
    if (picking) select.begin(name + '\n' + state + '\n' + data.page + '\n' + data.page_size, data.jobs, idSegment);
    const head = el('tr', {}, picking ? select.allBox(kit) : null, el('th', {}, 'ID'), el('th', {}, TIME_HEAD[state]),
      el('th', { class: 'num' }, 'Attempts'), el('th', { class: 'num' }, 'Failures'), el('th', {}, 'Error'),
      el('th', {}, 'Payload'), readOnly ? null : el('th', {}, ''));
    const rows = data.jobs.map((j) => el('tr', { 'data-id': j.id },
      picking ? select.box(kit, idSegment(j), j.id) : null,
      el('td', { class: 'id' }, el('a', { href: jobHref(name, idSegment(j)) }, j.id)),
      el('td', {}, state === 'pending' ? String(j.lane) : at(j.time_ms),
        state === 'delayed' && j.failures > 0 ? el('span', { class: 'muted' }, ' · retry') : null),
      el('td', { class: 'num' }, j.attempts), el('td', { class: 'num' }, j.failures),
      el('td', { class: 'err' }, j.error ? bytesText(j.error) : '–'),
      el('td', {}, j.row_found ? bytesText(j.payload) : '(gone)'),
      readOnly ? null : el('td', {}, jobButtons(name, j.id, idSegment(j), state === 'retries' ? 'delayed' : state))));
    const note = state === 'waiting' && data.jobs.length && !readOnly
      ? el('p', { class: 'muted' }, 'A waiting parent is released by its children: no action applies to it (cancel refuses one).') : null;
    return [picking ? select.actionBar(kit, name, state) : null, pager(name, state, data), note,
      el('table', { id: 'jobs' }, el('thead', {}, head), el('tbody', {}, rows))];
  }

  async function queueView(name) {
    const params = new URLSearchParams(location.search);
    const state = STATES.includes(params.get('state')) || params.get('state') === 'completed' ? params.get('state') : 'pending';
    const page = Math.max(1, parseInt(params.get('page') || '1', 10) || 1);
    crumbs(el('a', { href: '/' }, 'queues'), el('span', {}, name));
    const [data, groups] = await Promise.all([api('/api/queues/' + encodeURIComponent(name) + '?state=' +
      (state === 'completed' ? 'pending' : state) + '&page=' + page + '&size=' + window.emqPrefs.pageSize()),
    window.emqGroups.load(kit, name)]);
    const q = data.queue;
    const tabs = el('div', { class: 'tabs' }, [...STATES, 'completed'].map((s) =>
      el('a', { href: queueHref(name, s), class: s === state ? 'current' : null, 'data-state': s,
                'aria-current': s === state ? 'page' : null },
        s + (q[s] !== undefined ? ' (' + q[s] + ')' : s === state && s !== 'completed' ? ' (' + data.total + ')' : ''))));
    const summary = el('p', {}, q.paused ? el('span', { class: 'paused' }, 'paused') : 'running',
      ' · oldest pending ' + age(q.oldest_pending_age_ms),
      ' · completed ' + (q.counters.completed ?? '?') + ', died ' + (q.counters.dead ?? '?') + ' since the queue began');
    const actions = el('div', { class: 'actions' }, pauseButton(q), state === 'dead' ? retryAllButton(q) : null,
      state === 'dead' ? window.emqActions.deleteAllDead(kit, q) : null);
    const list = state === 'completed' ? await window.emqLists.completedSection(kit, name) : jobsTable(name, state, data);
    show(el('div', {}, el('h2', {}, name), summary, window.emqFleet.queueNotes(kit, q), actions, limitsSection(q),
      window.emqGroups.section(kit, name, groups), schedulesSection(name, data.schedules), window.emqHistory.section(kit, name),
      el('h3', {}, 'Jobs'), tabs, state === 'pending' ? window.emqGroups.pendingNote(kit, groups) : null, list));
  }

  // The trace of a job whose row has a traceparent: its id, a link into
  // the tracing tool when emq web was given --trace-url.
  function traceField(trace) {
    if (!trace) return null;
    if (trace.id === null) return [el('dt', {}, 'trace'), el('dd', {}, "none: the row's traceparent is not W3C (" + trace.problem + ')')];
    const shown = trace.url === null ? trace.id : el('a', { href: trace.url, rel: 'noreferrer' }, trace.id);
    return [el('dt', {}, 'trace'), el('dd', { id: 'job-trace' }, shown)];
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
    const story = window.emqStory;
    const fields = el('dl', { class: 'fields', id: 'job-fields' }, el('dt', {}, 'state'), el('dd', {}, data.state ?? '–'),
      traceField(data.trace), story.timeFields(kit, data.story),
      Object.entries(data.fields).filter(([k]) => k !== 'state').map(([k, v]) => [el('dt', {}, k), el('dd', {}, bytesText(v))]));
    const id = data.id + (data.id_hex !== undefined ? ' (not UTF-8; bytes ' + data.id_hex + ')' : '');
    show(el('div', {}, el('h2', { class: 'id' }, id), el('div', { class: 'actions' }, jobButtons(name, id, idSeg, data.state)), fields,
      flowSection(data), window.emqTree.section(kit, data), story.runsSection(kit, data),
      story.bytesBlock(kit, 'payload', data.payload, base + '/payload'), story.bytesBlock(kit, 'error', data.error, base + '/error'),
      story.bytesBlock(kit, 'result', data.result, base + '/result'), story.eventsSection(kit, data)));
  }

  // ---- which view, and keeping it fresh ----

  function route() {
    // Segments stay encoded until used: a job id's may hold bytes that are
    // not UTF-8, which decodeURIComponent refuses.
    const parts = location.pathname.split('/').filter((p) => p !== '');
    if (parts.length === 1 && parts[0] === 'daemons') return () => window.emqFleet.daemonsView(kit);
    if (parts.length === 1 && parts[0] === 'search') return () => window.emqSearch.view(kit);
    if (parts.length === 2 && parts[0] === 'queues') return () => queueView(segmentText(parts[1]));
    if (parts.length === 4 && parts[0] === 'queues' && parts[2] === 'groups') {
      return () => window.emqGroups.view(kit, segmentText(parts[1]), segmentText(parts[3]));
    }
    if (parts.length === 4 && parts[0] === 'queues' && parts[2] === 'jobs') {
      return () => jobView(segmentText(parts[1]), parts[3]);
    }
    return overview;
  }

  const view = route();

  // force: the reader acted (or resumed), so the page redraws even while
  // paused; the live stream's and the timers' redraws wait for the resume.
  async function refresh(force) {
    if (busy) return;
    if (frozen && !force) {
      missed++;
      document.getElementById('updated').textContent = 'paused · ' + missed + ' update' + (missed === 1 ? '' : 's') + ' held';
      return;
    }
    try {
      window.emqHistory.totals(kit);
      await view();
      document.getElementById('updated').textContent = 'updated ' + when(Date.now());
    } catch (e) {
      if (!e.shown && e.message && !document.getElementById('banner').textContent) notice(e.message, true);
    }
  }

  function pause(on) {
    frozen = on;
    missed = 0;
    if (on) document.getElementById('updated').textContent = 'paused';
    else refresh(true);
  }

  // The queue a page follows live, or null (the overview follows its
  // queues through lists.js, polling until they answer).
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

  document.getElementById('prefs').replaceChildren(...window.emqPrefs.controls(el, pause));
  document.getElementById('search-slot').appendChild(window.emqSearch.headerBox(kit, liveQueue()));
  refresh();
  if (window.emqPrefs.live) {
    poll(true);
    follow(liveQueue());
  }
})();
