// emq web's search (/search?q=…): a job by its id across queues, or the
// jobs of one queue and state whose payload, error or id holds a text,
// with how many rows were scanned of how many; and the bulk actions on
// what was found, asked for in the page before the POST, or on the rows
// selected (select.js). app.js calls
// view(kit) once a load: a search is read once, not polled. Server values
// reach the document as text only, as everywhere on the page.
'use strict';

window.emqSearch = (function () {
  const STATES = ['pending', 'active', 'delayed', 'dead', 'waiting'];
  const FIELDS = ['payload', 'error', 'id'];
  let drawn = false;

  function params() {
    const p = new URLSearchParams(location.search);
    return {
      q: p.get('q') || '',
      queue: p.get('queue') || '',
      state: STATES.includes(p.get('state')) ? p.get('state') : (p.get('queue') ? 'dead' : 'pending'),
      in: FIELDS.includes(p.get('in')) ? p.get('in') : 'payload',
      scan: p.get('scan') || '',
    };
  }

  function query(s) {
    const p = new URLSearchParams({ q: s.q });
    if (s.queue) {
      p.set('queue', s.queue);
      p.set('state', s.state);
      p.set('in', s.in);
    }
    if (s.scan) p.set('scan', s.scan);
    return p.toString();
  }

  // The page's policy allows no form submission (form-action 'none'): a
  // form here navigates by script, to the same URL a GET form would.
  function navigating(form) {
    form.addEventListener('submit', (e) => {
      e.preventDefault();
      location.assign('/search?' + new URLSearchParams(new FormData(form)).toString());
    });
    return form;
  }

  function select(kit, name, values, current) {
    return kit.el('select', { name }, values.map((v) => {
      const o = kit.el('option', { value: v }, v === '' ? '(any queue: the text is an id)' : v);
      if (v === current) o.selected = true;
      return o;
    }));
  }

  function form(kit, s, queues) {
    return navigating(kit.el('form', { id: 'search-form', action: '/search', method: 'get', class: 'actions' },
      kit.el('input', { type: 'text', name: 'q', value: s.q, placeholder: 'job id, or text', size: 30 }),
      select(kit, 'queue', [''].concat(queues), s.queue), ' in ', select(kit, 'state', STATES, s.state),
      ' whose ', select(kit, 'in', FIELDS, s.in), ' contains it · scan at most ',
      kit.el('input', { type: 'number', name: 'scan', value: s.scan || 10000, min: 1, max: 50000 }),
      kit.el('button', { type: 'submit' }, 'Search')));
  }

  // state: the searched state when the rows may be selected and acted on.
  function resultTable(kit, data, queueOf, state) {
    const select = window.emqSelect;
    const picking = state && select.offers(kit, state);
    const head = kit.el('tr', {}, picking ? select.allBox(kit) : null, kit.el('th', {}, 'Queue'), kit.el('th', {}, 'ID'),
      kit.el('th', {}, 'State'), kit.el('th', { class: 'num' }, 'Attempts'), kit.el('th', {}, 'Error'), kit.el('th', {}, 'Payload'));
    const rows = data.map((j) => kit.el('tr', { 'data-id': j.id },
      picking ? select.box(kit, kit.idSegment(j), j.id) : null,
      kit.el('td', {}, queueOf(j)),
      kit.el('td', { class: 'id' }, kit.el('a', { href: kit.jobHref(queueOf(j), kit.idSegment(j)) }, j.id)),
      kit.el('td', {}, j.state || '(gone)'), kit.el('td', { class: 'num' }, j.attempts),
      kit.el('td', { class: 'err' }, j.error ? kit.bytesText(j.error) : '–'),
      kit.el('td', {}, j.row_found ? kit.bytesText(j.payload) : '(gone)')));
    return kit.el('table', { id: 'found' }, kit.el('thead', {}, head), kit.el('tbody', {}, rows));
  }

  // "Retry all N" / "Cancel all N": asks in the page, then POSTs the same
  // search and shows what was done and what was left alone.
  function bulkControl(kit, s, data) {
    const action = data.state === 'dead' ? 'retry' : (['pending', 'delayed'].includes(data.state) ? 'cancel' : null);
    if (kit.readOnly || !action || data.found === 0 || s.in === 'id') return null;
    const label = (action === 'retry' ? 'Retry all ' : 'Cancel all ') + data.found;
    const box = kit.el('div', { id: 'bulk', class: 'actions' });
    const ask = () => {
      const yes = kit.button('Yes, ' + label.toLowerCase(), () => run(), true);
      yes.id = 'bulk-confirm';
      box.replaceChildren(kit.el('span', { id: 'bulk-question' },
        (action === 'retry' ? 'Retry ' : 'Cancel ') + data.found + ' ' + data.state + ' jobs of ' + data.queue +
        ' whose ' + s.in + ' contains the text? '), yes, kit.button('No', () => box.replaceChildren(start)));
    };
    const run = async () => {
      box.replaceChildren(kit.el('span', {}, 'Working…'));
      const p = new URLSearchParams({ match: s.q, state: data.state, in: s.in });
      if (s.scan) p.set('scan', s.scan);
      try {
        const r = await kit.api('/api/queues/' + encodeURIComponent(data.queue) + '/bulk/' + action + '?' + p,
          { method: 'POST', headers: { 'X-EMQ-Token': kit.token } });
        // The POST searched again: what it no longer found had changed state.
        const left = r.changed + Math.max(0, data.found - r.found);
        box.replaceChildren(kit.el('span', { id: 'bulk-result' },
          (action === 'retry' ? 'Retried ' : 'Cancelled ') + r.done +
          (left ? '; ' + left + ' had changed state and were left alone' : '') +
          (r.held ? '; ' + r.held + ' stayed dead: another live job holds their unique key' : '') +
          (r.found > data.found ? '; ' + (r.found - data.found) + ' more matched than at the search' : '') + '.'));
      } catch (e) {
        box.replaceChildren(kit.el('span', { class: 'err' }, 'Refused: ' + e.message));
      }
    };
    const start = kit.button(label, ask, true);
    start.id = 'bulk-start';
    box.replaceChildren(start);
    return box;
  }

  async function view(kit) {
    if (drawn) return;
    drawn = true;
    const s = params();
    kit.crumbs(kit.el('a', { href: '/' }, 'queues'), kit.el('span', {}, 'search'));
    const queues = (await kit.api('/api/queues')).queues.map((q) => q.queue);
    const parts = [kit.el('h2', {}, 'Search'), form(kit, s, queues)];
    if (!s.q) return kit.show(kit.el('div', {}, parts));
    const data = await kit.api('/api/search?' + query(s));
    if (data.kind === 'id') {
      // One job: straight to it, as a search box by id is used.
      if (data.found.length === 1) return location.replace(kit.jobHref(data.found[0].queue, kit.idSegment(data.found[0])));
      parts.push(kit.el('p', { id: 'scanned' }, data.found.length === 0
        ? 'No job with that id in any queue. To search by text, choose a queue.'
        : data.found.length + ' jobs have that id, one per queue:'));
      if (data.found.length) parts.push(resultTable(kit, data.found, (j) => j.queue));
    } else {
      parts.push(kit.el('p', { id: 'scanned' }, 'scanned ' + data.scanned + ' of ' + data.total + ' ' + data.state +
        ' jobs of ' + data.queue + '; ' + data.found + ' found' +
        (data.found > data.jobs.length ? ', the first ' + data.jobs.length + ' shown' : '') +
        (data.scanned < data.total ? '; raise the scan to read more' : '')));
      parts.push(bulkControl(kit, s, data));
      if (window.emqSelect.offers(kit, data.state)) {
        window.emqSelect.begin('search\n' + location.search, data.jobs, kit.idSegment);
        parts.push(window.emqSelect.actionBar(kit, data.queue, data.state));
      }
      parts.push(resultTable(kit, data.jobs, () => data.queue, data.state));
    }
    kit.show(kit.el('div', {}, parts));
  }

  // The header's box: on a queue's page it searches that queue's dead jobs.
  function headerBox(kit, queue) {
    const f = kit.el('form', { id: 'search-box', action: '/search', method: 'get' },
      kit.el('input', { type: 'search', name: 'q', placeholder: queue ? 'search ' + queue : 'job id', size: 24 }));
    if (queue) {
      f.appendChild(kit.el('input', { type: 'hidden', name: 'queue', value: queue }));
      f.appendChild(kit.el('input', { type: 'hidden', name: 'state', value: 'dead' }));
    }
    return navigating(f);
  }

  return { view, headerBox };
})();
