// The sidebar buttons: pydata-sphinx-theme 0.17 listens on the first .primary-toggle and
// .secondary-toggle of the page (a hidden button of its own header), so the buttons
// sphinx-book-theme shows do nothing. A click on any other toggle is passed to the first one,
// whose handlers open the navigation dialog (narrow screens) or collapse the sidebar (wide).
// See site/webpage.py.
document.addEventListener("DOMContentLoaded", () => {
  for (const selector of [".primary-toggle", ".secondary-toggle"]) {
    const [bound, ...others] = document.querySelectorAll(selector);
    for (const button of others) {
      button.addEventListener("click", (event) => {
        event.preventDefault();
        event.stopImmediatePropagation();
        bound.click();
      }, true);
    }
  }
});
