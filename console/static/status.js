/* global document, localStorage, location, setTimeout, clearTimeout */
// /status refreshes itself every data-refresh seconds while the "Refresh" box is ticked (WCAG 2.2.1: the reader can
// turn it off; the choice is remembered in this browser). Served from /status/static (the CSP allows no inline script).
(() => {
  const box = document.getElementById('auto-refresh');
  if (!box) return;
  const seconds = Number(box.getAttribute('data-refresh')) || 60;
  const KEY = 'svc-status-refresh';
  try {
    box.checked = localStorage.getItem(KEY) !== 'off';
  } catch {
    // storage refused: keep the default
  }
  let timer = null;
  const arm = () => {
    clearTimeout(timer);
    if (box.checked) timer = setTimeout(() => location.reload(), seconds * 1000);
  };
  box.addEventListener('change', () => {
    try {
      localStorage.setItem(KEY, box.checked ? 'on' : 'off');
    } catch {
      // ignored
    }
    arm();
  });
  arm();
})();
