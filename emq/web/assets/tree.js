// A parent's whole tree on its job page: every descendant /api/queues/Q/
// jobs/ID read (data.tree), nested, each with its state and the head of
// its result or error; where the server cut (too many jobs or levels, or a
// job met twice) the page says so and names `emq flow show`.
'use strict';

window.emqTree = (function () {
  function cutText(c) {
    if (c === 'repeat') return 'shown elsewhere in this tree';
    if (c === 'depth') return 'not read: too many levels down';
    return 'not read: the page reads at most 1,000 jobs of a tree';
  }

  function nodeItem(kit, n) {
    const el = kit.el;
    const link = el('a', { href: kit.jobHref(n.queue, kit.idSegment(n)) }, n.queue + ' / ' + n.id);
    const line = [link];
    if (n.cut) {
      line.push(' · ', el('span', { class: 'muted' }, cutText(n.cut)));
    } else {
      line.push(' · ', n.state === null ? el('span', { class: 'held' }, 'row gone') : n.state);
      if (n.told) line.push(' · told: ' + n.told);
      else if (n.awaited) line.push(' · awaited');
      if (n.result) line.push(' · result: ', el('code', {}, kit.bytesText(n.result)));
      if (n.error) line.push(' · error: ', el('code', { class: 'err' }, kit.bytesText(n.error)));
    }
    const kids = n.children && n.children.length ? el('ul', {}, n.children.map((c) => nodeItem(kit, c))) : null;
    return el('li', { 'data-node': n.queue + ':' + n.id, 'data-state': n.cut ? null : n.state }, line, kids);
  }

  function section(kit, data) {
    const t = data.tree;
    if (!t || !t.root.children || !t.root.children.length) return null;
    const el = kit.el;
    const note = t.cut ? el('p', { class: 'notice', id: 'tree-cut' }, 'Cut: ' + t.nodes + ' jobs read, ' + t.cut +
      ' more listed but not read. emq flow show ' + data.queue + ' ' + data.id + ' shows the rest.') : null;
    return [el('h3', {}, 'Tree (' + t.nodes + ' jobs)'), note,
      el('ul', { id: 'tree', class: 'tree' }, t.root.children.map((c) => nodeItem(kit, c)))];
  }

  return { section };
})();
