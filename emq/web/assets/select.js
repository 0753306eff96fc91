// Select and act: a checkbox on each row of a list of jobs (a queue's
// pending, delayed, retries or dead jobs; a search's results), one to
// select every row of the page, and Retry, Run now, Cancel or Delete on the
// selection. It asks with the count first, then POSTs the ids in batches
// (/api/queues/Q/selection/ACTION: at most 100 ids and a bounded URL a
// request, each one round trip of the same transitions a row's button
// uses), and says how many were done and how many had moved on meanwhile.
// The selection survives the live redraws of the list; a new list or page
// starts a new one. Nothing is drawn under --read-only.
'use strict';

window.emqSelect = (function () {
  const BATCH = 100;        // ids per request: the server's bound
  const URL_BYTES = 6000;   // of a request's path and query, well inside its 8 KiB head
  // What each list offers: [action, button, the verb of the answer].
  const OFFERS = {
    dead: [['retry', 'Retry', 'Retried'], ['delete', 'Delete', 'Deleted']],
    delayed: [['run', 'Run now', 'Running now'], ['cancel', 'Cancel', 'Cancelled']],
    pending: [['cancel', 'Cancel', 'Cancelled']],
  };
  OFFERS.retries = OFFERS.delayed;
  // Why a job was not acted on: it left the list's state before its turn.
  const MOVED = { retry: 'not dead any more', delete: 'not dead any more', run: 'not delayed any more',
                  cancel: 'claimed, moved or gone' };

  let list = '';              // the list the selection belongs to: queue, state and page
  let chosen = new Map();     // id segment -> id as shown
  let bar = null;             // the bar of the list drawn last
  let pageIds = [];           // [segment, id] of the rows drawn last

  // Whether a list of this state offers actions.
  function offers(kit, state) {
    return !kit.readOnly && !!OFFERS[state];
  }

  // Called once per draw of a list: keeps the selection while it is the same list.
  function begin(key, jobs, idSegment) {
    if (key !== list) { list = key; chosen = new Map(); }
    pageIds = jobs.map((j) => [idSegment(j), j.id]);
  }

  function allChosen() {
    return pageIds.length > 0 && pageIds.every(([seg]) => chosen.has(seg));
  }

  function syncBoxes() {
    for (const box of document.querySelectorAll('input[data-select]')) box.checked = chosen.has(box.dataset.select);
    const all = document.getElementById('select-all');
    if (all) all.checked = allChosen();
    if (bar) bar.update();
  }

  function box(kit, seg, id) {
    const node = kit.el('input', { type: 'checkbox', 'data-select': seg, 'aria-label': 'select ' + id });
    node.checked = chosen.has(seg);
    node.addEventListener('change', () => {
      if (node.checked) chosen.set(seg, id); else chosen.delete(seg);
      syncBoxes();
    });
    return kit.el('td', { class: 'pick' }, node);
  }

  function allBox(kit) {
    const node = kit.el('input', { type: 'checkbox', id: 'select-all', 'aria-label': 'select every job on this page' });
    node.checked = allChosen();
    node.addEventListener('change', () => {
      for (const [seg, id] of pageIds) if (node.checked) chosen.set(seg, id); else chosen.delete(seg);
      syncBoxes();
    });
    return kit.el('th', { class: 'pick' }, node);
  }

  // The ids in requests of at most BATCH ids and URL_BYTES bytes each.
  function batches(base, segs) {
    const out = [];
    let url = base, n = 0;
    for (const seg of segs) {
      const part = '&id=' + seg;
      if (n === BATCH || (n > 0 && url.length + part.length > URL_BYTES)) { out.push([url, n]); url = base; n = 0; }
      url += part;
      n++;
    }
    if (n) out.push([url, n]);
    return out;
  }

  async function run(kit, queue, state, [action, label, verb]) {
    const segs = [...chosen.keys()];
    const what = segs.length + ' selected ' + (state === 'retries' ? 'retrying' : state) + (segs.length === 1 ? ' job' : ' jobs');
    if (!window.confirm(label + ' ' + what + ' of ' + queue + '?')) return;
    // The server's state for the Retries list is its set's: delayed.
    const base = '/api/queues/' + encodeURIComponent(queue) + '/selection/' + action + '?state=' +
      (state === 'retries' ? 'delayed' : state);
    const started = performance.now();
    let done = 0, moved = 0, held = 0, sent = 0;
    kit.hold(true);
    try {
      for (const [url, n] of batches(base, segs)) {
        kit.notice(label + ': ' + sent + ' of ' + segs.length + '…', false);
        const r = await kit.api(url, { method: 'POST', headers: { 'X-EMQ-Token': kit.token } });
        done += r.done;
        moved += r.moved_on;
        held += r.held;
        sent += n;
      }
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      chosen = new Map();
      kit.notice(verb + ' ' + done + ' of ' + segs.length + ' in ' + seconds + ' s' +
        (moved ? '; ' + moved + ' had moved on (' + MOVED[action] + ') and ' + (moved === 1 ? 'was' : 'were') +
          ' left alone' : '') +
        (held ? '; ' + held + ' stayed dead: another live job holds their unique key' : '') + '.', false);
    } catch (e) {
      if (!e.shown) kit.notice('Refused after ' + done + ' done of ' + segs.length + ': ' + e.message, true);
    } finally {
      kit.hold(false);
      syncBoxes();
      kit.refresh(true);
    }
  }

  // The bar above the list: how many are selected, and the actions.
  function actionBar(kit, queue, state) {
    const node = kit.el('div', { id: 'selection', class: 'actions', role: 'region', 'aria-label': 'selected jobs' });
    node.update = () => {
      const n = chosen.size;
      node.replaceChildren(kit.el('span', { id: 'selection-count' }, n ? n + ' selected' : 'Select jobs to act on them'),
        ...OFFERS[state].map((offer) => {
          const b = kit.button(offer[1], () => run(kit, queue, state, offer), offer[0] === 'delete' || offer[0] === 'cancel');
          b.disabled = n === 0;
          return b;
        }),
        n ? kit.button('Clear', () => { chosen = new Map(); syncBoxes(); }) : null);
    };
    node.update();
    bar = node;
    return node;
  }

  return { offers, begin, box, allBox, actionBar };
})();
