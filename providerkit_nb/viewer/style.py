"""The cards' one style sheet, shared by the HTML file, the widget and a saved notebook.

Text wraps anywhere (one long token never widens the page); code keeps its lines and wraps too.
Class names all start with ``pk-`` so the sheet can sit inside a notebook without touching it.
"""

from __future__ import annotations

CSS = """
.pk-view{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;font-size:13px;line-height:1.35;color:#1f2328;max-width:100%;overflow-wrap:anywhere}
.pk-view *{box-sizing:border-box}
.pk-view div,.pk-view pre,.pk-view ol,.pk-view li{line-height:1.35}
.pk-view pre,.jp-RenderedHTMLCommon .pk-view pre{margin:2px 0;padding:2px 4px;line-height:1.35}
.pk-view details,.pk-view summary{margin:0}
.pk-view a{color:#0b5cad;text-decoration:none}.pk-view a:hover{text-decoration:underline}
.pk-summary{margin:4px 0 8px}
.pk-ok{background:#e8f5e9;border:1px solid #a5d6a7;padding:6px 10px;border-radius:4px;margin:4px 0}
.pk-findings{margin:4px 0 10px;padding:0;list-style:none}
.pk-findings li{padding:3px 6px;border-left:4px solid #d0d7de;margin:2px 0;background:#f6f8fa}
.pk-findings li.pk-fk-lost_call{border-color:#cf222e}
.pk-findings li:target{background:#fff8c5}
.pk-badge{display:inline-block;font-size:11px;padding:0 5px;border-radius:3px;background:#eaeef2;color:#424a53;margin-left:4px;white-space:nowrap}
.pk-row{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:8px;padding:2px 0;align-items:start}
.pk-row.pk-one,.pk-row.pk-same{grid-template-columns:minmax(0,1fr)}
.pk-row,.pk-card,.pk-findings li{scroll-margin-top:76px}
.pk-empty{border:1px dashed #d0d7de;border-radius:4px;color:#8c959f;font-size:12px;padding:4px 8px}
.pk-card{border:1px solid #d0d7de;border-radius:4px;padding:3px 8px;background:#fff;min-width:0}
.pk-card:target,.pk-card.pk-hit,.pk-row.pk-hit,.pk-row:target{outline:2px solid #0969da}
.pk-r-user{background:#f6fbff}.pk-r-system{background:#fafafa}.pk-r-tool{background:#fcfcfc}
.pk-changed{background:#fff8e1;border-color:#d4a72c}
.pk-flagged{border-left:4px solid #bf8700}
.pk-head{font-size:12px;color:#57606a}
.pk-idx{font-family:ui-monospace,monospace;margin-right:4px}
.pk-role{color:#1f2328}
.pk-info{color:#6e7781;margin-left:6px}
.pk-text{white-space:pre-wrap;overflow-wrap:anywhere;margin:2px 0}
.pk-thinking{color:#6e7781;font-style:italic}
.pk-code{white-space:pre-wrap;overflow-wrap:anywhere;font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px;margin:2px 0;background:#f6f8fa;padding:2px 4px;border-radius:3px}
.pk-lbl{font-size:11px;color:#6e7781}
.pk-fold summary{cursor:pointer;font-size:12px;color:#57606a;overflow-wrap:anywhere}
.pk-first{color:#8c959f}
.pk-n{font-weight:600}
.pk-call{border-left:3px solid #8250df;padding:1px 6px;margin:3px 0}
.pk-callhead{font-size:12px}
.pk-id{font-family:ui-monospace,monospace;font-size:11px;color:#8250df;background:#fbefff;padding:0 3px;border-radius:3px}
.pk-result{margin-top:2px;font-size:12px;color:#57606a}
.pk-result.pk-bad{border-left:3px solid #cf222e;padding-left:4px}
.pk-badge.pk-bad{background:#ffebe9;color:#a40e26}
.pk-what{color:#424a53}
.pk-gist{font-family:ui-monospace,monospace;font-size:11px;background:#f6f8fa;padding:0 3px;border-radius:3px;overflow-wrap:anywhere}
.pk-stub{font-size:12px;color:#6e7781}
.pk-lost{border-left-color:#cf222e;background:#fff5f5}
.pk-lostbox{border:1px solid #cf222e;border-radius:4px;padding:3px 6px;margin:3px 0;background:#ffebe9}
.pk-note{border:1px solid #bf8700;border-radius:4px;padding:3px 6px;margin:3px 0;background:#fff8c5}
.pk-why{font-size:12px;margin-top:2px}
.pk-told{white-space:pre-wrap;font-family:ui-monospace,monospace;font-size:12px;background:#fff;padding:2px 4px;border-radius:3px}
.pk-cols{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:8px;font-weight:600;font-size:12px;color:#57606a}
.pk-cols.pk-one{grid-template-columns:minmax(0,1fr)}
.pk-gap{text-align:center;color:#8c959f;font-size:12px;padding:2px}
.pk-legend .pk-badge{margin-right:6px}
.pk-text.pk-md{white-space:normal}
.pk-md>:first-child{margin-top:0}.pk-md>:last-child{margin-bottom:0}
.pk-md p,.pk-md ul,.pk-md ol,.pk-md blockquote,.pk-md table{margin:3px 0}
.pk-md ul,.pk-md ol{padding-left:20px}
.pk-md h1,.pk-md h2,.pk-md h3,.pk-md h4,.pk-md h5,.pk-md h6{margin:6px 0 3px;line-height:1.25}
.pk-md h1{font-size:16px}.pk-md h2{font-size:15px}.pk-md h3{font-size:14px}.pk-md h4,.pk-md h5,.pk-md h6{font-size:13px}
.pk-md pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f6f8fa;border-radius:3px}
.pk-md code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:12px;overflow-wrap:anywhere}
.pk-md :not(pre)>code{background:#f6f8fa;padding:0 3px;border-radius:3px}
.pk-md blockquote{border-left:3px solid #d0d7de;padding-left:8px;color:#57606a;margin-left:0}
.pk-md table{border-collapse:collapse;display:block;max-width:100%;overflow-x:auto}
.pk-md th,.pk-md td{border:1px solid #d0d7de;padding:1px 6px;vertical-align:top}
.pk-md hr{border:0;border-top:1px solid #d0d7de}
.pk-img{color:#6e7781}.pk-url{font-family:ui-monospace,monospace;font-size:11px;overflow-wrap:anywhere}
.pk-raw>summary{font-size:11px}
.pk-path{font-size:12px}
.pk-dstat{font-family:ui-monospace,monospace;font-size:11px;margin-left:4px}
.pk-plus{color:#1a7f37}.pk-minus{color:#cf222e}
.pk-diff>*{display:block;min-height:1.35em;padding:0 4px;margin:0 -4px;font-style:normal;font-weight:normal;text-decoration:none}
.pk-diff>ins{background:#dafbe1;color:#116329}.pk-diff>del{background:#ffebe9;color:#a40e26}
.pk-diff>em{background:#ddf4ff;color:#0550ae}.pk-diff>strong{font-weight:600;color:#424a53}
.pk-hl [class^=k],.pk-hl .ow{color:#cf222e}.pk-hl [class^=s]{color:#0a3069}.pk-hl [class^=m]{color:#0550ae}
.pk-hl [class^=c]{color:#6e7781;font-style:italic}.pk-hl .nf,.pk-hl .fm{color:#8250df}.pk-hl .nc,.pk-hl .nn{color:#953800}
.pk-hl .nb,.pk-hl .bp,.pk-hl .na{color:#0550ae}.pk-hl .nt{color:#116329}.pk-hl .nd{color:#8250df}
.pk-num{padding-left:4.4em;list-style:decimal}.pk-num>li{min-height:1.35em;padding-left:.5em}
.pk-num>li::marker{content:counter(list-item) "  ";color:#8c959f;font-size:11px}
.pk-cmd{background:#24292f;color:#f6f8fa}.pk-ps{color:#8c959f;user-select:none;-webkit-user-select:none}
.pk-term{background:#f6f8fa;border-left:3px solid #8c959f}
.pk-exit{font-family:ui-monospace,monospace}
.pk-todos{list-style:none;margin:2px 0;padding-left:4px}.pk-todo{margin:1px 0}
.pk-tick{font-size:14px}.pk-todo-completed{color:#57606a}.pk-todo-in_progress{font-weight:600}
.pk-took{color:#6e7781;margin-left:4px}
.pk-path-note code{font-size:11px}
.pk-nested{border:1px solid #d0d7de;border-left:4px solid #8250df;border-radius:4px;margin:4px 0;padding:2px 6px;background:#fbfaff}
.pk-nested-branch{border-left-color:#8c959f;background:#fafafa}
.pk-nested>summary{cursor:pointer;font-size:12px}
.pk-nested-body{padding:2px 0 2px 4px}
.pk-under{grid-column:1/-1}
.pk-nested-ptr{margin:2px 0}
.pk-timeline{margin:4px 0 8px}
.pk-tl-grid{display:grid;grid-template-columns:80px minmax(0,1fr);border:1px solid #eaeef2;border-radius:4px;background:#fff}
.pk-tl-names{font-size:11px;line-height:20px;padding-left:4px}.pk-tl-names>div{height:20px}
.pk-tl-plot{position:relative;height:60px}
.pk-tl-plot svg{display:block;width:100%;height:60px;overflow:visible}
.pk-tl-axis{display:flex;justify-content:space-between;font-size:11px;color:#6e7781;padding-left:80px}
.pk-tl-break{position:absolute;top:0;font-size:11px;color:#cf222e;font-weight:600;background:rgba(255,255,255,.85);padding:0 3px}
.pk-tl-gap{position:absolute;bottom:0;font-size:10px;color:#6e7781;background:rgba(255,255,255,.85)}
.pk-rendered{border:1px solid #d0d7de;border-radius:4px;padding:4px 8px;margin:2px 0;background:#fff}
.pk-view mark{color:inherit}
.pk-mark{background:#fff8c5;outline:1px solid #d4a72c;color:inherit}
.pk-mark.pk-cur{background:#ffb700;outline:2px solid #bf8700}
"""
