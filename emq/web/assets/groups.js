// emq web's groups (docs/web.md, "Groups"): on a queue's page, its groups
// with the largest backlogs first (the 20 the API lists), each with its
// pending and active counts, weight, caps, place in the rotation and
// whether it is paused, and Pause/Resume; a group's own page, with its
// pending jobs in claim order and a form for its weight and caps. Every
// change is a POST through the page's act() (its token, its origin),
// merged server-side into the policy the group runs by; none is drawn
// under --read-only. Server values reach the page as text only.
'use strict';

window.emqGroups = (function () {
  function groupsPath(q) {
    return '/api/queues/' + encodeURIComponent(q) + '/groups';
  }

  function groupHref(q, g, page) {
    return '/queues/' + encodeURIComponent(q) + '/groups/' + encodeURIComponent(g) + (page > 1 ? '?page=' + page : '');
  }

  function load(kit, q) {
    return kit.api(groupsPath(q));
  }

  // Its caps in short: max active and rate, or a dash.
  function capsText(kit, p) {
    const parts = [];
    if (p.max_active !== null) parts.push('max ' + p.max_active + ' active');
    if (p.rate) parts.push(kit.rateText(p.rate));
    return parts.length ? parts.join(' · ') : '–';
  }

  // Where claim has it: its turn in the rotation, or why it is out.
  function placeText(g) {
    return g.place === 'rotation' && g.turn !== null ? 'rotation #' + g.turn : g.place;
  }

  function pauseButton(kit, q, g) {
    if (kit.readOnly || !g.policy) return null;
    const path = groupsPath(q) + '/' + encodeURIComponent(g.group);
    return g.policy.paused
      ? kit.button('Resume', () => kit.act(path + '/resume', () => 'Resumed group ' + g.group + ' of ' + q))
      : kit.button('Pause', () => kit.act(path + '/pause', () => 'Paused group ' + g.group + ' of ' + q +
        ': claim serves none of its jobs until it is resumed'));
  }

  // Weight, caps (or why its policy does not read) and paused, as cells.
  function policyCells(kit, g) {
    const el = kit.el;
    if (!g.policy) {
      return [el('td', { class: 'held', colspan: 2, title: g.broken }, 'broken policy: ' + g.broken), el('td', {}, '–')];
    }
    return [el('td', { class: 'num', title: g.own_policy === null ? 'the default' : 'its own' }, g.policy.weight),
      el('td', { class: 'limits' }, capsText(kit, g.policy)),
      el('td', {}, g.policy.paused ? el('span', { class: 'paused' }, 'paused') : '–')];
  }

  // The queue page's section; nothing for a queue without groups.
  function section(kit, q, data) {
    const el = kit.el;
    if (!data.groups && !data.top.length && !data.default_policy.text) return null;
    const d = data.default_policy;
    const more = data.more ? ' · the ' + data.top.length + ' largest backlogs shown' : '';
    const summary = el('p', { id: 'groups-summary' }, data.groups + ' groups · ' + data.grouped_pending +
      ' pending in groups · ' + data.rotation + ' in the rotation · default policy: ',
      d.broken ? el('span', { class: 'held' }, 'broken: ' + d.broken) : d.described, more);
    const head = el('tr', {}, el('th', {}, 'Group'), el('th', { class: 'num' }, 'Pending'), el('th', { class: 'num' }, 'Active'),
      el('th', { class: 'num' }, 'Weight'), el('th', {}, 'Caps'), el('th', {}, 'Paused'), el('th', {}, 'Place'),
      kit.readOnly ? null : el('th', {}, ''));
    const rows = data.top.map((g) => el('tr', { 'data-group': g.group },
      el('td', { class: 'id' }, el('a', { href: groupHref(q, g.group) }, g.group)),
      el('td', { class: 'num' }, g.pending), el('td', { class: 'num' }, g.active),
      policyCells(kit, g), el('td', {}, placeText(g)),
      kit.readOnly ? null : el('td', {}, pauseButton(kit, q, g))));
    return [el('h3', {}, 'Groups'), summary, el('table', { id: 'groups' }, el('thead', {}, head), el('tbody', {}, rows))];
  }

  // Under the Pending tab: its list is the queue's pending set, which a
  // grouped job never enters; its group's list has it.
  function pendingNote(kit, data) {
    if (!data.grouped_pending) return null;
    return kit.el('p', { class: 'muted', id: 'grouped-pending' }, data.grouped_pending + ' more pending jobs wait in ' +
      'their groups (Groups, above; each group lists its own): this list holds the ungrouped ones.');
  }

  // What is typed in a group's form, kept across the view's redraws.
  const drafts = {};

  // Weight and caps: a value left empty stays; "off" clears a cap.
  function policyForm(kit, q, g) {
    if (kit.readOnly) return null;
    const key = q + '\n' + g.group;
    const draft = drafts[key] || (drafts[key] = {});
    const input = (name, placeholder) => {
      const node = kit.el('input', { name: name, placeholder: placeholder, size: 12 });
      node.value = draft[name] || '';
      node.addEventListener('input', () => { draft[name] = node.value; });
      return node;
    };
    const fields = [['weight', '1..1000'], ['max_active', 'N or off'], ['rate', '100/1s or off']].map(([n, p]) => [n, input(n, p)]);
    const apply = () => {
      const query = fields.filter(([, node]) => node.value.trim())
        .map(([n, node]) => n + '=' + encodeURIComponent(node.value.trim()));
      if (!query.length) return kit.notice('Give a weight, max active or a rate (or off) to change', true);
      delete drafts[key];
      kit.act(groupsPath(q) + '/' + encodeURIComponent(g.group) + '/policy?' + query.join('&'),
        (b) => 'Group ' + g.group + ' of ' + q + ': ' + b.group.policy.described);
    };
    return kit.el('div', { class: 'actions', id: 'group-form' },
      fields.map(([n, node]) => [kit.el('label', {}, n.replace('_', ' ') + ' ', node), ' ']), kit.button('Set', apply));
  }

  // /queues/Q/groups/G: the group, its actions, its pending jobs.
  async function view(kit, q, name) {
    const el = kit.el;
    kit.crumbs(el('a', { href: '/' }, 'queues'), el('a', { href: '/queues/' + encodeURIComponent(q) }, q),
      el('span', {}, 'group ' + name));
    const page = Math.max(1, parseInt(new URLSearchParams(location.search).get('page') || '1', 10) || 1);
    const data = await kit.api(groupsPath(q) + '/' + encodeURIComponent(name) + '?page=' + page);
    const g = data.group;
    const policy = g.own_policy === null ? 'none of its own: runs by the default' : g.own_policy || '(all defaults)';
    const fields = el('dl', { class: 'fields', id: 'group-fields' },
      el('dt', {}, 'pending'), el('dd', {}, g.pending), el('dt', {}, 'active'), el('dd', {}, g.active),
      el('dt', {}, 'place'), el('dd', {}, placeText(g)), el('dt', {}, 'own policy'), el('dd', {}, policy),
      el('dt', {}, 'runs by'), el('dd', {}, g.policy ? g.policy.described : el('span', { class: 'held' }, 'broken: ' + g.broken)));
    const first = (data.page - 1) * data.page_size;
    const pager = el('div', { class: 'pager' },
      data.page > 1 ? el('a', { href: groupHref(q, name, data.page - 1), rel: 'prev' }, '← sooner') : null,
      el('span', { id: 'page-where' }, data.jobs.length ? (first + 1) + '–' + (first + data.jobs.length) + ' of ' + data.total +
        ' pending, in claim order · page ' + data.page + ' of ' + data.pages : 'no pending jobs'),
      data.page < data.pages ? el('a', { href: groupHref(q, name, data.page + 1), rel: 'next' }, 'later →') : null);
    const head = el('tr', {}, ['ID', 'Lane', 'Attempts', 'Failures', 'Payload'].map((t, i) =>
      el('th', { class: i === 2 || i === 3 ? 'num' : null }, t)));
    const rows = data.jobs.map((j) => el('tr', { 'data-id': j.id },
      el('td', { class: 'id' }, el('a', { href: kit.jobHref(q, kit.idSegment(j)) }, j.id)),
      el('td', {}, String(j.lane)), el('td', { class: 'num' }, j.attempts), el('td', { class: 'num' }, j.failures),
      el('td', {}, j.row_found ? kit.bytesText(j.payload) : '(gone)')));
    kit.show(el('div', {}, el('h2', { class: 'id' }, name), fields, el('div', { class: 'actions' }, pauseButton(kit, q, g)),
      policyForm(kit, q, g), el('h3', {}, 'Pending jobs'), pager,
      el('table', { id: 'group-jobs' }, el('thead', {}, head), el('tbody', {}, rows))));
  }

  return { load, section, pendingNote, view };
})();
