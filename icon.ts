/** The agent icon (icon.svg), as a string: the plugin reads no files of its own at run time. */
export const ICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64" width="64" height="64" role="img" aria-label="Claude Code">\n  <rect x="2" y="2" width="60" height="60" rx="14" fill="#1f1e1d"/>\n  <path d="M14 22 L24 32 L14 42" fill="none" stroke="#f4f1ea" stroke-width="5" stroke-linecap="round" stroke-linejoin="round"/>\n  <g transform="translate(42 32)" stroke="#d97757" stroke-width="4.5" stroke-linecap="round">\n    <line x1="0" y1="-12" x2="0" y2="12"/>\n    <line x1="-10.4" y1="-6" x2="10.4" y2="6"/>\n    <line x1="-10.4" y1="6" x2="10.4" y2="-6"/>\n  </g>\n</svg>'

export const ICON_DATA_URL = `data:image/svg+xml;utf8,${encodeURIComponent(ICON_SVG)}`
