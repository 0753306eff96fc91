// emq web's operator actions beside retry and cancel (docs/web.md,
// "Actions"): Run now on a delayed job, Fire now on a schedule, the limits
// form, Delete all dead; and the one way every page writes a time. Each
// action is a POST through the page's act() (its token, its origin); none
// is drawn under --read-only. Server values reach the page as text only.
'use strict';

window.emqActions = (function () {
  // Every time on the page, by the server's clock in UTC and saying so:
  // schedules, the wire and `emq` all speak UTC (docs/decisions.md).
  function when(ms) {
    if (ms === null || ms === undefined || !Number.isFinite(Number(ms))) return '–';
    return new Date(Number(ms)).toISOString().slice(0, 19).replace('T', ' ') + ' UTC';
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

  return { when, day, runNow, fireNow, deleteAllDead, limitsForm };
})();
