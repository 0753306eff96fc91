// emq web's operator actions beside retry and cancel (docs/web.md,
// "Actions"): Run now on a delayed job, Fire now on a schedule, the limits
// form, Delete all dead; and the one way every page writes a time. Each
// action is a POST through the page's act() (its token, its origin); none
// is drawn under --read-only. Server values reach the page as text only.
'use strict';

window.emqActions = (function () {
  // Every time on the page: local time, or UTC when the reader chose it
  // (prefs.js); a time element carries both on hover (docs/decisions.md).
  const pad = (n) => String(n).padStart(2, '0');

  function utcText(ms) {
    return new Date(Number(ms)).toISOString().slice(0, 19).replace('T', ' ') + ' UTC';
  }

  function localText(ms) {
    const d = new Date(Number(ms));
    return d.getFullYear() + '-' + pad(d.getMonth() + 1) + '-' + pad(d.getDate()) + ' ' + pad(d.getHours()) + ':' +
      pad(d.getMinutes()) + ':' + pad(d.getSeconds());
  }

  function valid(ms) {
    return ms !== null && ms !== undefined && Number.isFinite(Number(ms));
  }

  function when(ms) {
    if (!valid(ms)) return '–';
    return window.emqPrefs.utc() ? utcText(ms) : localText(ms);
  }

  // A time as an element: shown as when() says, both zones on hover.
  function at(ms) {
    const node = document.createElement('time');
    node.textContent = when(ms);
    if (valid(ms)) {
      node.setAttribute('datetime', new Date(Number(ms)).toISOString());
      node.setAttribute('title', utcText(ms) + ' · ' + localText(ms) + ' local (' + window.emqPrefs.offsetText() + ')');
    }
    return node;
  }

  function day(ms) {
    return new Date(Number(ms)).toISOString().slice(0, 10) + ' UTC';
  }

  function queuePath(q) {
    return '/api/queues/' + encodeURIComponent(q);
  }

  // A delayed job's "Run now": to pending at its lane (the wire's promote_job).
  function runNow(kit, q, id, idSeg) {
    return kit.button('Run now', () => kit.act(queuePath(q) + '/jobs/' + idSeg + '/promote',
      () => 'Running ' + id + ' now: it is pending'));
  }

  function fireNow(kit, q, schedule) {
    if (kit.readOnly) return null;
    return kit.button('Fire now', () => kit.act(queuePath(q) + '/schedules/' + encodeURIComponent(schedule) + '/fire',
      (b) => 'Fired ' + schedule + ': job ' + b.job));
  }

  // Delete all dead: the count asked about first, then the purge in batches.
  function deleteAllDead(kit, q) {
    if (kit.readOnly || !q.dead) return null;
    return kit.button('Delete all dead', () => {
      if (!window.confirm('Delete all ' + q.dead + ' dead jobs of ' + q.queue + ', rows and all?')) return;
      kit.act(queuePath(q.queue) + '/dead/purge', (b) => 'Deleted ' + b.deleted + ' dead jobs');
    }, true);
  }

  // What is typed in a queue's limits form, kept across the view's redraws
  // (live, every few seconds) so typing is not wiped; gone once sent.
  const drafts = {};

  // The limits form: a value left empty stays as it is; "off" clears it.
  function limitsForm(kit, q) {
    if (kit.readOnly) return null;
    const draft = drafts[q.queue] || (drafts[q.queue] = {});
    const input = (name, placeholder) => {
      const node = kit.el('input', { name: name, placeholder: placeholder, size: 12 });
      node.value = draft[name] || '';
      node.addEventListener('input', () => { draft[name] = node.value; });
      return node;
    };
    const maxActive = input('max_active', 'N or off');
    const rate = input('rate', '100/1s or off');
    const send = (query) => {
      delete drafts[q.queue];
      kit.act(queuePath(q.queue) + '/limits?' + query, (b) => 'Limits of ' + q.queue + ': ' + b.limits.described);
    };
    const apply = () => {
      const query = [];
      if (maxActive.value.trim()) query.push('max_active=' + encodeURIComponent(maxActive.value.trim()));
      if (rate.value.trim()) query.push('rate=' + encodeURIComponent(rate.value.trim()));
      if (!query.length) return kit.notice('Give max active or a rate (or off) to change', true);
      send(query.join('&'));
    };
    return kit.el('div', { class: 'actions', id: 'limits-form' },
      kit.el('label', {}, 'max active ', maxActive), ' ', kit.el('label', {}, 'rate ', rate), ' ',
      kit.button('Set limits', apply),
      kit.button('Clear limits', () => send('max_active=off&rate=off')));
  }

  return { when, at, day, runNow, fireNow, deleteAllDead, limitsForm };
})();
