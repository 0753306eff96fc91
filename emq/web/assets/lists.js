// emq web's lists that are not a set of the queue, and the overview's one
// live stream. The Completed tab reads the queue's events stream
// (/api/queues/Q/completed), newest first, a page per cursor. The overview
// follows every queue that keeps events through ONE EventSource
// (/api/events/overview: a browser allows ~6 connections per host) and
// polls only while some queue keeps no events, or is past the 64 followed
// (and, while all are followed, redraws every 30 s for what no event says);
// what finishes feeds the realtime chart (glance.js).
'use strict';

window.emqLists = (function () {
  const MAX_FOLLOWED = 64;
  const REDRAW_MS = 250;

  function completedHref(q, before) {
    const base = '/queues/' + encodeURIComponent(q) + '?state=completed';
    return before ? base + '&before=' + encodeURIComponent(before) : base;
  }

  // The Completed tab's body: the table and its "older" link, or what to
  // set when the queue keeps no events.
  async function completedSection(kit, name) {
    const el = kit.el;
    const before = new URLSearchParams(location.search).get('before') || '';
    const data = await kit.api('/api/queues/' + encodeURIComponent(name) + '/completed' +
      (before ? '?before=' + encodeURIComponent(before) : ''));
    if (!data.keeps_events) return el('p', { class: 'notice', id: 'completed-off' }, data.how);
    const head = el('tr', {}, el('th', {}, 'Completed at'), el('th', {}, 'ID'), el('th', { class: 'num' }, 'Attempt'));
    const rows = data.completed.map((c) => el('tr', { 'data-id': c.id },
      el('td', {}, kit.at(c.time_ms)),
      el('td', { class: 'id' }, c.row_state === null
        ? el('span', { title: 'its row is gone (kept only keep_completed_s)' }, c.id)
        : el('a', { href: kit.jobHref(name, kit.idSegment(c)) }, c.id)),
      el('td', { class: 'num' }, c.attempt)));
    const pager = el('div', { class: 'pager' },
      before ? el('a', { href: completedHref(name, '') }, '← newest') : null,
      el('span', {}, data.completed.length ? data.completed.length + ' completions, newest first (' + data.scanned +
        ' stream entries read)' : 'no completions in the events stream' + (before ? ' before this point' : '')),
      data.next ? el('a', { href: completedHref(name, data.next), rel: 'next' }, 'older →') : null);
    return el('div', {}, pager, el('table', { id: 'completed' }, el('thead', {}, head), el('tbody', {}, rows)));
  }

  // ---- the overview, live ----

  // What the stream does not carry (a pause, limits, a daemon gone) still
  // shows within this, while every queue is followed and nothing polls.
  const SLOW_REFRESH_MS = 30000;

  let source = null;
  let followed = '';  // the queue names the open stream follows, joined
  let redraw = null;
  let slow = null;

  function slowRefresh(kit, on) {
    if (on && !slow) slow = setInterval(kit.refresh, SLOW_REFRESH_MS);
    if (!on && slow) { clearInterval(slow); slow = null; }
  }

  // names: the overview's queues as last read; hooks.poll(on) turns the
  // page's polling on or off. Reopens the stream when the queues change.
  function followOverview(kit, names, hooks) {
    if (typeof EventSource === 'undefined') return;
    const some = names.slice(0, MAX_FOLLOWED);
    if (some.join('\n') === followed && source) return;
    if (source) source.close();
    followed = some.join('\n');
    if (!some.length) { source = null; return; }
    const states = new Map(some.map((q) => [q, 'opening']));
    // Polls while any queue is not followed live: the overview reads every
    // queue in one request, so those queues cost the one poll.
    const settle = () => {
      // None left to follow: the server ends the stream; closing it here
      // keeps the browser from reopening it every 2 s.
      if ([...states.values()].every((s) => s === 'off' || s === 'trouble')) source.close();
      const all = [...states.values()].every((s) => s === 'ready') && names.length <= MAX_FOLLOWED;
      hooks.poll(!all);
      slowRefresh(kit, all);
      if ([...states.values()].some((s) => s === 'ready')) document.body.setAttribute('data-live', 'true');
      else document.body.removeAttribute('data-live');
    };
    const mark = (state) => (e) => {
      try { states.set(JSON.parse(e.data).queue, state); } catch (err) { return; }
      settle();
    };
    source = new EventSource('/api/events/overview?' + some.map((q) => 'queue=' + encodeURIComponent(q)).join('&'));
    source.addEventListener('ready', mark('ready'));
    source.addEventListener('off', mark('off'));
    source.addEventListener('trouble', mark('trouble'));
    source.addEventListener('job', (e) => {
      try { window.emqGlance.count(JSON.parse(e.data)); } catch (err) { /* not an entry: nothing to count */ }
      if (!redraw) redraw = setTimeout(() => { redraw = null; kit.refresh(); }, REDRAW_MS);
    });
    source.onerror = () => {
      for (const q of states.keys()) states.set(q, 'opening');
      settle();
    };
  }

  return { completedSection, followOverview };
})();
