// emq web's choices a reader makes for the page, kept in the browser
// (localStorage): dark or light (until chosen, the system's
// prefers-color-scheme), times in local time or UTC, the page size of job
// lists. Loaded before the page is drawn (not deferred), so a dark page
// never flashes light. Also what the address says: ?live=0 draws the page
// once and follows nothing (headless screenshots, docs/web.md).
'use strict';

window.emqPrefs = (function () {
  const SIZES = [50, 100, 500];

  function get(name, fallback) {
    try {
      return localStorage.getItem(name) || fallback;
    } catch (e) {
      return fallback;
    }
  }

  function set(name, value) {
    try {
      localStorage.setItem(name, value);
    } catch (e) {
      // Not kept: the choice holds for this page only.
    }
  }

  function systemDark() {
    return !!(window.matchMedia && window.matchMedia('(prefers-color-scheme: dark)').matches);
  }

  // The theme shown: the one chosen, else the system's.
  function theme() {
    const chosen = get('emq-theme', '');
    return chosen === 'dark' || chosen === 'light' ? chosen : (systemDark() ? 'dark' : 'light');
  }

  function applyTheme() {
    const chosen = get('emq-theme', '');
    if (chosen === 'dark' || chosen === 'light') document.documentElement.setAttribute('data-theme', chosen);
    else document.documentElement.removeAttribute('data-theme');
  }

  const utc = () => get('emq-time', 'local') === 'utc';
  const live = new URLSearchParams(location.search).get('live') !== '0';

  // The page size: the address's, else the one chosen last, else 50.
  function pageSize() {
    const asked = Number(new URLSearchParams(location.search).get('size'));
    if (SIZES.includes(asked)) return asked;
    const kept = Number(get('emq-page-size', '50'));
    return SIZES.includes(kept) ? kept : 50;
  }

  // "UTC+01:00" for this browser's zone now.
  function offsetText() {
    const m = -new Date().getTimezoneOffset();
    const abs = Math.abs(m);
    return 'UTC' + (m < 0 ? '-' : '+') + String(Math.floor(abs / 60)).padStart(2, '0') + ':' + String(abs % 60).padStart(2, '0');
  }

  // The header's buttons: dark mode, the time zone, and the pause of the
  // live redraw (pause.onToggle(paused) is the page's).
  function controls(el, pause) {
    const dark = el('button', { type: 'button', id: 'theme-toggle', 'aria-pressed': theme() === 'dark' ? 'true' : 'false',
      title: 'dark or light, remembered by this browser' }, 'Dark mode');
    dark.addEventListener('click', () => {
      set('emq-theme', theme() === 'dark' ? 'light' : 'dark');
      applyTheme();
      dark.setAttribute('aria-pressed', theme() === 'dark' ? 'true' : 'false');
    });
    const zone = el('button', { type: 'button', id: 'time-toggle', 'aria-pressed': utc() ? 'true' : 'false',
      title: 'show times in UTC or in local time (' + offsetText() + '); hover a time for both' },
      utc() ? 'Times: UTC' : 'Times: local');
    zone.addEventListener('click', () => {
      set('emq-time', utc() ? 'local' : 'utc');
      location.reload();
    });
    const out = [dark, zone];
    if (live) {
      const hold = el('button', { type: 'button', id: 'pause-live', 'aria-pressed': 'false',
        title: 'stop redrawing while you read; nothing is lost' }, 'Pause updates');
      hold.addEventListener('click', () => {
        const paused = hold.getAttribute('aria-pressed') !== 'true';
        hold.setAttribute('aria-pressed', paused ? 'true' : 'false');
        hold.textContent = paused ? 'Resume updates' : 'Pause updates';
        pause(paused);
      });
      out.push(hold);
    } else {
      out.push(el('span', { class: 'muted', id: 'static-note', title: 'opened with ?live=0: drawn once, not followed' }, 'static'));
    }
    return out;
  }

  function rememberPageSize(n) {
    if (SIZES.includes(n)) set('emq-page-size', String(n));
  }

  applyTheme();
  return { theme, utc, live, pageSize, rememberPageSize, offsetText, controls, SIZES };
})();
