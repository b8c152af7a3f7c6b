/* global document, Element, navigator */
// The console's only script (CSP: no inline scripts): the Copy button of the show-once key dialog.
document.addEventListener('click', async (event) => {
  const button = event.target instanceof Element ? event.target.closest('[data-copy]') : null;
  if (!button) return;
  const source = document.getElementById(button.getAttribute('data-copy'));
  const status = document.querySelector('[data-copy-status]');
  if (!source) return;
  try {
    await navigator.clipboard.writeText(source.value);
    if (status) status.textContent = 'Copied.';
  } catch {
    source.select();
    if (status) status.textContent = 'Select the key and copy it (Ctrl+C).';
  }
});
