;;; tether-render.el --- How Tether's run events read, in *tether* and *tether-chat*  -*- lexical-binding: t; -*-

;;; Commentary:

;; One renderer for the transcript (`*tether*', tether.el) and the chat
;; (`*tether-chat*', tether-chat.el): `tether-render-event' turns an `agent/event'
;; into what a view shows — lines with their faces, or streamed text — and the views
;; only put that in their buffers.  A renderer's options say the few ways the two
;; differ (the prompt as a line, text as it streams, the decisions taken without
;; asking); everything else reads the same in both.
;;
;; A running command's status line (`  ⠹ 3 s · compiling foo.c') is a line like the
;; others, marked `tether-progress': a view calls `tether-render-replace-progress' with
;; each event's items before it puts them in, so that the line is there while the
;; command runs and its result (or anything else) takes its place.
;;
;; The model's thinking is never shown as the answer: each piece is a `(thinking NEW
;; SUMMARY TEXT)' item, which a view puts in with `tether-render-think' — a block of
;; its own before the step's text, a summary line (`▸ thinking (12 words)', a button:
;; RET or a click shows or hides the text, as C-c C-t does for the block at point or
;; the latest) growing as it streams, the text hidden
;; (an overlay's `invisible' property).

;;; Code:

(require 'cl-lib)
(require 'json)
(require 'seq)
(require 'subr-x)

(defface tether-prompt-face '((t :inherit bold))
  "A run's prompt in the transcript and the chat."
  :group 'tether)

(defface tether-tool-face '((t :inherit font-lock-function-name-face))
  "A tool call line."
  :group 'tether)

(defface tether-ok-face '((t :inherit success))
  "A tool that succeeded, an allowed approval."
  :group 'tether)

(defface tether-failed-face '((t :inherit error))
  "A tool that failed, a denied or withdrawn approval."
  :group 'tether)

(defface tether-outcome-face '((t :inherit font-lock-comment-face))
  "A run's outcome line."
  :group 'tether)

(defface tether-thinking-face '((t :inherit shadow))
  "The model's thinking: its summary line and its text."
  :group 'tether)

(cl-defstruct (tether-render (:constructor tether-render-create (&key prompt stream approvals))
                             (:copier nil))
  "How a view shows a run's events.
PROMPT: the run's prompt as a line (`▶ ...').  STREAM: the text as it streams (else
each step's whole text at its end).  APPROVALS: the decisions taken without asking
\(the others are shown where they are taken).  STREAMED: the current step's text
arrived as deltas.  THINKING: the thinking block growing, (WORDS . IN-WORD), or nil.
CR: the last delta ended in a carriage return, held: with the next delta's line
feed it is one line break, else it is shown as `\\r'."
  prompt stream approvals streamed thinking cr)

(defconst tether-render--hidden
  (rx (any (0 . 8) (11 . 31) (#x7f . #x9f) #xad #x61c #x180e (#x200b . #x200f)
           (#x2028 . #x202e) (#x2060 . #x206f) #xfeff (#xfff9 . #xfffb)
           (#xe0000 . #xe007f)))
  "Characters a screen does not show as themselves.
The server's `text/display.py' escapes the same.")

(defconst tether-render--hidden-one-line
  (rx (any (0 . 31) (#x7f . #x9f) #xad #x61c #x180e (#x200b . #x200f)
           (#x2028 . #x202e) (#x2060 . #x206f) #xfeff (#xfff9 . #xfffb)
           (#xe0000 . #xe007f)))
  "What a screen does not show as itself on one line: line breaks and tabs too.")

(defun tether-render--escape (char)
  "CHAR written as an escape a person can read: `\\r', `\\x1b', `\\u202e'."
  (cond ((eq char ?\r) "\\r")
        ((eq char ?\n) "\\n")
        ((eq char ?\t) "\\t")
        ((< char #x100) (format "\\x%02x" char))
        ((< char #x10000) (format "\\u%04x" char))
        (t (format "\\U%08x" char))))

(defun tether-render--letter-p (char)
  "Whether CHAR is visible and not ASCII: a zero-width joiner may stand next to it."
  (and (> char 127) (not (string-match-p tether-render--hidden (string char)))))

(defun tether-render-shown (text &optional one-line)
  "TEXT from outside (the model's, a tool's, a server's) as a person sees it.
As the server's `text.display.shown' with lines: line breaks and tabs
kept, every control character, carriage return, bidi control, zero-width
or tag character escaped, so nothing is dropped and nothing acts.  A
zero-width joiner between two characters that are not ASCII (an emoji
sequence) stays.  With ONE-LINE (a name, a title), line breaks and tabs
are escaped too.  Escapes are printable ASCII: text the server showed
already comes back the same."
  (let ((text (if one-line text (replace-regexp-in-string "\r\n" "\n" text t t)))
        (hidden (if one-line tether-render--hidden-one-line tether-render--hidden))
        (case-fold-search nil)
        (start 0)
        (out nil))
    (while (string-match hidden text start)
      (let* ((at (match-beginning 0))
             (char (aref text at)))
        (push (substring text start at) out)
        (push (if (and (memq char '(#x200c #x200d)) (> at 0) (< (1+ at) (length text))
                       (tether-render--letter-p (aref text (1- at)))
                       (tether-render--letter-p (aref text (1+ at))))
                  (string char)
                (tether-render--escape char))
              out)
        (setq start (1+ at))))
    (push (substring text start) out)
    (apply #'concat (nreverse out))))

(defun tether-render-thinking-line (words)
  "`▸ thinking (WORDS words)': the summary of a thinking block."
  (format "▸ thinking (%d word%s)" words (if (eql words 1) "" "s")))

(defun tether-render--thinking (render text)
  "The item of a piece TEXT of thinking, counted in RENDER's block.
A new block when RENDER has none."
  (let* ((new (null (tether-render-thinking render)))
         (block (or (tether-render-thinking render) (cons 0 nil)))
         (pos 0))
    (while (string-match "[^ \t\n\r\f\v]+" text pos)
      (unless (and (= (match-beginning 0) 0) (cdr block))  ; a word cut between two pieces
        (setcar block (1+ (car block))))
      (setq pos (match-end 0)))
    (unless (string-empty-p text)
      (setcdr block (string-match-p "[^ \t\n\r\f\v]\\'" text)))
    (setf (tether-render-thinking render) block)
    (list (list 'thinking new (tether-render-thinking-line (car block))
                (tether-render-shown text)))))

(defvar-local tether-render--block nil
  "The thinking block growing at the end of this buffer.
\(SYMBOL START TAIL OVERLAY): START and TAIL are markers (its summary line,
where its text goes on); OVERLAY hides the text (an overlay: Markdown's
font-lock strips an `invisible' text property).")

(defvar-local tether-render--blocks 0
  "How many thinking blocks this buffer holds (each hidden by a symbol of its own).")

(defun tether-render-toggle-thinking (&optional button)
  "Show or hide the thinking block of BUTTON, of point, or else the latest one."
  (interactive)
  (let ((block (or (get-text-property (if button (button-start button) (point))
                                      'tether-thinking)
                   (and (> tether-render--blocks 0)
                        (intern (format "tether-thinking-%d" tether-render--blocks))))))
    (when block
      (if (invisible-p block)
          (remove-from-invisibility-spec block)
        (add-to-invisibility-spec block))
      (force-window-update (current-buffer)))))  ; no text changed: redisplay would not know

(defun tether-render--summary (summary block properties)
  "The SUMMARY line of BLOCK as a button that shows or hides it, with PROPERTIES."
  (apply #'propertize
         (make-text-button (copy-sequence summary) nil
                           'action #'tether-render-toggle-thinking 'follow-link t
                           'help-echo "RET or click: show or hide the model's thinking")
         'tether-thinking block 'font-lock-face 'tether-thinking-face properties))

(defun tether-render-think (item output &optional properties)
  "Put the thinking ITEM in the current buffer, whose view writes at OUTPUT.
ITEM is `(thinking NEW SUMMARY TEXT)'.  A new block (NEW, or something
else was written since) starts on a line of its own: SUMMARY, a button,
then TEXT, hidden, its lines indented.  A piece of the same block
rewrites its summary and adds its text.  PROPERTIES go on all that is
inserted.  Return where the output goes now."
  (pcase-let ((`(thinking ,new ,summary ,text) item)
              (inhibit-read-only t)
              (block tether-render--block))
    (save-excursion
      (if (and block (not new) (= (1+ (nth 2 block)) output))
          (let ((start (nth 1 block)))
            (goto-char start)
            (delete-region start (line-end-position))
            (insert (tether-render--summary summary (car block) properties)))
        (goto-char output)
        (unless (memq (char-before) '(nil ?\n))
          (insert (apply #'propertize "\n" properties)))
        (let ((symbol (intern (format "tether-thinking-%d"
                                      (setq tether-render--blocks
                                            (1+ tether-render--blocks))))))
          (add-to-invisibility-spec symbol)
          (setq block (list symbol (point-marker)))
          (insert (tether-render--summary summary symbol properties))
          (let ((hidden (point)))
            (insert (apply #'propertize "\n  " 'tether-thinking symbol
                           'font-lock-face 'tether-thinking-face properties))
            (let ((overlay (make-overlay hidden (point) nil t nil)))
              (overlay-put overlay 'invisible symbol)
              (setq block (append block (list (point-marker) overlay)))))
          (insert (apply #'propertize "\n" properties))
          (setq tether-render--block block)))
      (let ((tail (nth 2 block))
            (overlay (nth 3 block)))
        (goto-char tail)
        (insert (apply #'propertize (replace-regexp-in-string "\n" "\n  " text t t)
                       'tether-thinking (car block)
                       'font-lock-face 'tether-thinking-face properties))
        (set-marker tail (point))
        (move-overlay overlay (overlay-start overlay) tail)
        (1+ tail)))))

(defun tether-render-first-line (text)
  "The first non-blank line of TEXT."
  (or (seq-find (lambda (line) (not (string-blank-p line)))
                (split-string (or text "") "\n"))
      ""))

(defun tether-render--call-target (arguments)
  "What a tool call with ARGUMENTS is about: its path, pattern or command."
  (or (plist-get arguments :path) (plist-get arguments :pattern)
      (plist-get arguments :command) ""))

(defun tether-render-json-line (value &optional max)
  "VALUE (a parsed JSON object) as JSON on one line, cut to MAX (200) characters."
  (let ((text (condition-case nil (json-encode value) (error "{…}")))
        (max (or max 200)))
    (if (> (length text) max) (concat (substring text 0 (1- max)) "…") text)))

(defun tether-render-call-name (event)
  "The name people read for EVENT's tool.
Its `label' (an MCP call's \"notes · echo\"), else the model's name for it."
  (let ((label (plist-get event :label)))
    (tether-render-shown (if (and (stringp label) (not (string-empty-p label)))
                             label
                           (format "%s" (plist-get event :tool)))
                         t)))

(defun tether-render-call-line (event)
  "EVENT's tool and what the call is about, as its `→' line says them.
An MCP call is about its JSON arguments: it has no path or command."
  (let ((target (tether-render--call-target (plist-get event :arguments))))
    (string-trim-right
     (format "%s %s" (tether-render-call-name event)
             (tether-render-shown
              (if (and (string-empty-p target)
                       (string-prefix-p "mcp__" (or (plist-get event :tool) "")))
                  (tether-render-json-line (plist-get event :arguments))
                (format "%s" target))
              t)))))

(defconst tether-render--spinner "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
  "The frames of a running command's spinner, turned by its time.")

(defun tether-render-running-line (event)
  "`  ⠹ 3 s · LAST': the status line of EVENT's running command.
EVENT is a `tool-progress'; the line says the seconds so far and the last
line the command printed (the server sends it escaped)."
  (let* ((ms (max 0 (or (plist-get event :elapsedMs) 0)))
         (frame (aref tether-render--spinner (% (/ ms 100) (length tether-render--spinner))))
         (last (plist-get event :lastLine))
         (line (format "  %c %d s" frame (/ ms 1000))))
    (if (and (stringp last) (not (string-empty-p last)))
        (concat line " · " (replace-regexp-in-string "[[:cntrl:]]" " " last))
      line)))

(defvar-local tether-render--progress nil
  "Whether this buffer shows a running command's status line.")
(put 'tether-render--progress 'permanent-local t)  ; the view's mode may come after

(defun tether-render--progress-p (item)
  "Whether ITEM (a rendered line) is a running command's status line."
  (and (stringp item) (get-text-property 0 'tether-progress item)))

(defun tether-render-replace-progress (buffer items)
  "Before a view puts ITEMS in BUFFER: take its running command's status line away.
Remember whether ITEMS bring a new one."
  (with-current-buffer buffer
    (when tether-render--progress
      (let ((inhibit-read-only t)
            (start (text-property-any (point-min) (point-max) 'tether-progress t)))
        (while start
          (let ((end (or (next-single-property-change start 'tether-progress) (point-max))))
            (when (eq (char-after end) ?\n) (setq end (1+ end)))
            (delete-region start end))
          (setq start (text-property-any (point-min) (point-max) 'tether-progress t)))))
    (setq tether-render--progress (and (seq-some #'tether-render--progress-p items) t))))

(defun tether-render-outcome-line (outcome steps)
  "`■ OUTCOME · STEPS steps' (`1 step')."
  (format "■ %s · %s step%s" outcome steps (if (eql steps 1) "" "s")))

(defun tether-render--face (text face)
  "TEXT in FACE (as `font-lock-face', which the views' font-lock keeps)."
  (propertize text 'font-lock-face face))

(defun tether-render-event (render event)
  "EVENT as RENDER shows it: a list of lines, each a string with its faces, or of
\(text . STRING) items, streamed text that continues the current line, or of
\(thinking NEW SUMMARY TEXT) items (`tether-render-think').  Every string from
outside is escaped here (`tether-render-shown'), before a view puts it in."
  (unless (equal (plist-get event :kind) "thinking")
    (setf (tether-render-thinking render) nil))  ; anything else ends a thinking block
  (if (and (tether-render-cr render)
           (not (member (plist-get event :kind) '("text-delta" "tool-progress"))))
      ;; a carriage return held at the end of the text, and no line feed came
      (append (tether-render-flush render) (tether-render--event render event))
    (tether-render--event render event)))

(defun tether-render-flush (render)
  "What RENDER still holds of the streamed text (a carriage return) as items."
  (when (tether-render-cr render)
    (setf (tether-render-cr render) nil)
    (list (cons 'text "\\r"))))

(defun tether-render--stream (render text)
  "The item of a streamed piece TEXT: escaped, a last carriage return held.
RENDER holds it until the next piece."
  (let ((text (concat (if (tether-render-cr render) "\r" "") text)))
    (setf (tether-render-cr render) (string-suffix-p "\r" text))
    (cons 'text (tether-render-shown (if (tether-render-cr render)
                                         (substring text 0 -1)
                                       text)))))

(defun tether-render--event (render event)
  "EVENT as RENDER shows it (`tether-render-event')."
  (pcase (plist-get event :kind)
    ("thinking" (tether-render--thinking render (or (plist-get event :text) "")))
    ("run-started"
     (when (tether-render-prompt render)
       (list (tether-render--face (format "▶ %s" (tether-render-shown
                                                 (format "%s" (plist-get event :prompt))))
                                  'tether-prompt-face))))
    ("step" (setf (tether-render-streamed render) nil) nil)
    ("text-delta"
     (when (tether-render-stream render)
       (setf (tether-render-streamed render) t)
       (list (tether-render--stream render (or (plist-get event :text) "")))))
    ("assistant"
     (let ((text (string-trim (or (plist-get event :text) ""))))
       (unless (or (tether-render-streamed render) (string-empty-p text))
         (list (tether-render-shown text)))))
    ("tool-call"
     (list (tether-render--face (concat "→ " (tether-render-call-line event))
                                'tether-tool-face)))
    ("approval"
     (when (tether-render-approvals render)
       (pcase (plist-get event :decision)
         ("auto" (list (tether-render--face "  ✓ allowed without asking" 'tether-ok-face)))
         ("denied-by-default"
          (list (tether-render--face "  ✗ denied (no answer)" 'tether-failed-face))))))
    ("tool-progress"
     (list (propertize (tether-render--face (tether-render-running-line event)
                                            'tether-outcome-face)
                       'tether-progress t)))
    ("tool-result"
     (let ((ok (eq (plist-get event :ok) t))
           (first (tether-render-first-line (or (plist-get event :error)
                                                (plist-get event :output)))))
       (list (string-trim-right
              (concat "  " (tether-render--face (if ok "✓" "✗")
                                                (if ok 'tether-ok-face 'tether-failed-face))
                      " " (tether-render--face (tether-render-call-name event) 'tether-tool-face)
                      ": " (tether-render-shown first))))))  ; one line: its tabs kept
    ("run-finished"
     (list (tether-render--face (tether-render-outcome-line (plist-get event :outcome)
                                                            (plist-get event :steps))
                                'tether-outcome-face)))))

(provide 'tether-render)
;;; tether-render.el ends here
