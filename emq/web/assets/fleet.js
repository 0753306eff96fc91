// emq web's fleet parts: the Daemons view (/daemons), its Quiet and Stop
// buttons, which wait for the daemon's own answer (its ack in the
// registry), and the Pause form that asks why and for how long. app.js
// calls these with its kit (el, api, act, button, ...); values from the
// server reach the document as text only, as everywhere on the page.
'use strict';

window.emqFleet = (function () {
  const ANSWER_READ_MS = 250;  // how often a waiting button reads /api/daemons
  const BEYOND_TWO_BEATS_MS = 5000;

  function span(ms) {
    if (ms === null || ms === undefined) return '–';
    if (ms < 10000) return (Math.max(0, ms) / 1000).toFixed(1) + ' s';
    if (ms < 120000) return Math.round(ms / 1000) + ' s';
    if (ms < 7200000) return Math.round(ms / 60000) + ' min';
    return Math.round(ms / 3600000) + ' h';
  }

  // Whether a daemon's ack answers a signal sent at sentMs: the same
  // signal (or a stop, for a quiet) acted on at or after it.
  function answers(ack, signal, sentMs) {
    return !!ack && ack.at_ms >= sentMs && (ack.signal === signal || (signal === 'quiet' && ack.signal === 'stop'));
  }

  function answerText(d, waitedMs) {
    const jobs = d.busy + (d.busy === 1 ? ' job' : ' jobs') + ' still running';
    return d.id + ': ' + d.state + ' (answered in ' + span(waitedMs) + '); ' + jobs;
  }

  // Sends the signal, then reads the registry until the daemon answers,
  // leaves (a stop that finished), or two of its beats and 5 s pass.
  async function signalAndWait(kit, id, signal) {
    const sent = await kit.api('/api/daemons/' + encodeURIComponent(id) + '/' + signal,
      { method: 'POST', headers: { 'X-EMQ-Token': kit.token } });
    const started = Date.now();
    const deadline = started + 2 * (sent.beat_every_ms || 5000) + BEYOND_TWO_BEATS_MS;
    while (Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, ANSWER_READ_MS));
      const data = await kit.api('/api/daemons');
      const d = data.daemons.find((each) => each.id === id);
      if (!d) {
        return signal === 'stop' ? id + ': stopped and left the registry (after ' + span(Date.now() - started) + ')'
          : id + ': left the registry without answering';
      }
      if (answers(d.ack, signal, sent.sent_ms)) return answerText(d, d.ack.at_ms - sent.sent_ms);
    }
    throw new Error(id + ': no answer within ' + span(Date.now() - started) +
      ' (the ' + signal + ' waits in its signals list until it beats again)');
  }

  async function press(kit, id, signal) {
    if (signal === 'stop' && !window.confirm('Stop daemon ' + id + '? It drains its running jobs and exits.')) return;
    kit.hold(true);
    kit.notice('Asked ' + id + ' to ' + signal + '; waiting for its answer…', false);
    try {
      kit.notice(await signalAndWait(kit, id, signal), false);
    } catch (e) {
      if (!e.shown) kit.notice(e.message, true);
    } finally {
      kit.hold(false);
      kit.refresh();
    }
  }

  function jobCell(kit, d) {
    if (!d.jobs.length) return kit.el('span', { class: 'muted' }, 'none');
    return d.jobs.map((j) => kit.el('div', { class: 'id', 'data-job': j.queue + ':' + j.id },
      kit.el('a', { href: '/queues/' + encodeURIComponent(j.queue) + '/jobs/' + encodeURIComponent(j.id) },
        j.queue + ' / ' + j.id),
      // One claimed ahead (prefetch) has not started: it waits in the daemon for a slot.
      ' · attempt ' + j.attempt + ' · ' + (j.prefetched ? 'waits for a slot' : span(kit.now - j.started_ms)),
      j.progress !== null ? ' · ' + j.progress : null));
  }

  async function daemonsView(kit) {
    kit.crumbs(kit.el('a', { href: '/' }, 'queues'), kit.el('span', {}, 'daemons'));
    const data = await kit.api('/api/daemons');
    kit.now = data.server_time_ms;
    const head = kit.el('tr', {}, ['Daemon', 'State', 'Queues'].map((t) => kit.el('th', {}, t)),
      kit.el('th', { class: 'num' }, 'Busy'), kit.el('th', { class: 'num' }, 'Last beat'),
      kit.el('th', { class: 'num' }, 'Up'), kit.el('th', {}, 'Running now'), kit.readOnly ? null : kit.el('th', {}, ''));
    const rows = data.daemons.map((d) => kit.el('tr', { 'data-daemon': d.id },
      kit.el('td', { class: 'id' }, d.id, kit.el('div', { class: 'muted' }, d.host + ' · pid ' + d.pid + ' · ' +
        d.version + ' · ' + d.executor)),
      kit.el('td', { class: d.state === 'running' ? null : 'paused' }, d.state),
      kit.el('td', {}, d.queues.map((q, i) => [i ? ', ' : '', kit.el('a', { href: '/queues/' + encodeURIComponent(q) }, q)])),
      kit.el('td', { class: 'num busy' }, d.busy + '/' + d.slots,
        d.prefetched ? kit.el('div', { class: 'muted prefetched' }, '+' + d.prefetched + ' waiting for a slot') : null),
      kit.el('td', { class: 'num' }, span(data.server_time_ms - d.beat_ms) + ' ago'),
      kit.el('td', { class: 'num' }, span(data.server_time_ms - d.started_ms)),
      kit.el('td', {}, jobCell(kit, d)),
      kit.readOnly ? null : kit.el('td', {},
        d.state === 'running' ? kit.button('Quiet', () => press(kit, d.id, 'quiet')) : null,
        d.state === 'stopping' ? null : kit.button('Stop', () => press(kit, d.id, 'stop'), true))));
    const parts = [kit.el('h2', {}, 'Daemons'),
      kit.el('table', { id: 'daemons' }, kit.el('thead', {}, head), kit.el('tbody', {}, rows))];
    // Keys of the registry another writer broke: named, and the rest listed.
    for (const p of data.problems || []) parts.push(kit.el('p', { class: 'notice error registry-problem' }, p));
    if (!data.daemons.length && !(data.problems || []).length) {
      parts.push(kit.el('p', { class: 'muted' }, 'No live daemons in {emq}:daemons.'));
    }
    if (data.ghosts) {
      parts.push(kit.el('p', { class: 'muted' }, data.ghosts + ' stopped beating without leaving (killed, or cut off ' +
        'from the server): left out, and removed once their last beat is an hour old.'));
    }
    kit.show(kit.el('div', {}, parts));
  }

  // ---- the Pause form: why, for how long, and who ----

  const LENGTHS = [['', 'until resumed'], ['15m', '15 minutes'], ['1h', '1 hour'], ['4h', '4 hours'], ['1d', '1 day']];

  function closeDialog() {
    const dialog = document.getElementById('dialog');
    dialog.replaceChildren();
    dialog.hidden = true;
  }

  // Outside the view, so a refresh of the view does not take it away.
  function openPauseForm(kit, queue) {
    const dialog = document.getElementById('dialog');
    const reason = kit.el('input', { type: 'text', name: 'reason', maxlength: 256, placeholder: 'why, for whoever finds it paused' });
    const length = kit.el('select', { name: 'for' }, LENGTHS.map(([v, label]) => kit.el('option', { value: v }, label)));
    const who = kit.el('input', { type: 'text', name: 'by', maxlength: 64, placeholder: 'who (default: emq web)' });
    who.value = localStorage.getItem('emq-pauser') || '';
    const submit = () => {
      const query = [['reason', reason.value], ['for', length.value], ['by', who.value]]
        .filter(([, v]) => v).map(([k, v]) => k + '=' + encodeURIComponent(v)).join('&');
      try {
        localStorage.setItem('emq-pauser', who.value);
      } catch (e) {
        // Not remembered: the next form asks again.
      }
      closeDialog();
      kit.act('/api/queues/' + encodeURIComponent(queue) + '/pause' + (query ? '?' + query : ''),
        (b) => 'Paused ' + queue + ' ' + b.pause);
    };
    dialog.replaceChildren(kit.el('form', { id: 'pause-form', 'data-queue': queue },
      kit.el('h3', {}, 'Pause ' + queue),
      kit.el('label', {}, 'Why ', reason), kit.el('label', {}, 'For how long ', length), kit.el('label', {}, 'Who ', who),
      kit.el('div', { class: 'actions' }, kit.button('Pause', submit, true), kit.button('Cancel', closeDialog))));
    dialog.querySelector('form').addEventListener('submit', (e) => {
      e.preventDefault();
      submit();
    });
    dialog.hidden = false;
    reason.focus();
  }

  // The queue's pause control: Resume, or Pause… that opens the form.
  function pauseControl(kit, q) {
    if (kit.readOnly) return null;
    const name = q.queue;
    return q.paused
      ? kit.button('Resume', () => kit.act('/api/queues/' + encodeURIComponent(name) + '/resume', () => 'Resumed ' + name))
      : kit.button('Pause…', () => openPauseForm(kit, name));
  }

  // The overview's State cell: running or paused (who, why, until), and
  // whether any live daemon serves the queue.
  function stateCell(kit, q) {
    const unserved = q.served_by === 0
      ? kit.el('div', { class: 'held', title: 'no live daemon lists this queue: its jobs wait until one does' }, 'no daemon')
      : null;
    if (!q.paused) return [kit.el('span', { class: 'muted' }, 'running'), unserved];
    return [kit.el('span', { class: 'paused', title: q.pause_text }, 'paused'),
      kit.el('div', { class: 'muted pause-text' }, q.pause_text), unserved];
  }

  // The queue page's line about who serves it and its pause.
  function queueNotes(kit, q) {
    const out = [];
    if (q.paused) out.push(kit.el('p', { id: 'pause-text' }, kit.el('span', { class: 'paused' }, 'paused '), q.pause_text));
    if (q.served_by === 0) {
      out.push(kit.el('p', { class: 'notice error', id: 'unserved' }, 'No live daemon serves ' + q.queue +
        ': its jobs wait until one that lists it runs (see ', kit.el('a', { href: '/daemons' }, 'daemons'), ').'));
    }
    return out;
  }

  return { daemonsView, pauseControl, stateCell, queueNotes };
})();
