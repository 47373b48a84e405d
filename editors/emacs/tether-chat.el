;;; tether-chat.el --- A conversation with Tether in *tether-chat*  -*- lexical-binding: t; -*-

;;; Commentary:

;; M-x tether-chat opens `*tether-chat*': type at the `tether> ' prompt and RET
;; sends, as in shell-mode.  The answer streams in above the prompt (with
;; Markdown's faces when `markdown-mode' is installed), tool calls show as
;; one-line entries, the model's thinking as a collapsed block before the answer
;; (`▸ thinking (12 words)': RET on it, or C-c C-t, shows or hides it), and
;; approvals appear inline: their keys (a, A, d) and buttons work only on the
;; approval itself, so typing at the prompt is never taken for an answer.  Follow-ups continue the same session.  C-u M-x tether-chat starts a
;; new one.  A message `/name [argument]' naming a session command (/undo, /new,
;; /model, /compact, /cost, /resume, /rules...) runs it: `/' at an empty prompt
;; lists them and TAB completes one (tether-chat-commands.el).

;;; Code:

(require 'button)
(require 'diff-mode)  ; its faces for the changes shown
(require 'subr-x)
(require 'tether)
(require 'tether-chat-commands)
(require 'tether-render)

(declare-function markdown-mode "markdown-mode" ())

(defcustom tether-chat-prompt "tether> "
  "The prompt of `*tether-chat*'."
  :type 'string
  :group 'tether)

(defface tether-chat-approval-face '((t :inherit warning))
  "The title of an approval in the chat."
  :group 'tether)

(defvar-local tether-chat--session-id nil
  "The session this chat continues; nil before its first answer.")

(defvar-local tether-chat--run-id nil
  "The chat's run in flight, or nil.")

(defvar-local tether-chat--command nil
  "The name of the session command in flight, or nil.")

(defvar-local tether-chat--output nil
  "Marker: where the run's output goes (the start of the prompt).")

(defvar-local tether-chat--input nil
  "Marker: where the user's input starts (the end of the prompt).")

(defvar-local tether-chat--render nil
  "How the chat shows the events of its run in flight (`tether-render').")

(defvar-local tether-chat--context nil
  "The buffer `tether-chat' was called from: the runs' context.")

;;; The mode

(defun tether-chat--base-mode ()
  "Markdown mode when it is installed (its faces for answers), else Text mode."
  (if (require 'markdown-mode nil t) (markdown-mode) (text-mode)))

;; Both bases derive from Text mode: `derived-mode-p' says so either way.
(put 'tether-chat--base-mode 'derived-mode-parent 'text-mode)

(defvar tether-chat-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'tether-chat-send)
    (define-key map (kbd "C-c C-c") #'tether-chat-cancel)
    (define-key map (kbd "C-c C-a") #'tether-chat-goto-approval)
    (define-key map (kbd "C-c C-t") #'tether-render-toggle-thinking)
    (define-key map (kbd "TAB") #'completion-at-point)
    (define-key map "/" #'tether-chat-slash)
    map)
  "Keys of `*tether-chat*'.")

(defvar tether-chat-approval-map
  (let ((map (make-sparse-keymap)))
    (set-keymap-parent map button-map)
    (define-key map "a" #'tether-chat-allow)
    (define-key map "A" #'tether-chat-allow-always)
    (define-key map "d" #'tether-chat-deny)
    (define-key map "v" #'tether-chat-review)
    (define-key map (kbd "TAB") #'forward-button)
    map)
  "Keys on an approval waiting in the chat (and nowhere else).")

(define-derived-mode tether-chat-mode tether-chat--base-mode "Tether-Chat"
  "A conversation with Tether: type at the prompt, RET sends.
\\{tether-chat-mode-map}"
  ;; markdown-mode's font-lock would strip the `rear-nonsticky' that lets the user
  ;; type after the read-only prompt (approvals' keys live in overlays anyway).
  (setq-local font-lock-defaults
              (mapcar (lambda (entry)
                        (if (eq (car-safe entry) 'font-lock-extra-managed-props)
                            (cons (car entry) (remq 'rear-nonsticky (cdr entry)))
                          entry))
                      font-lock-defaults))
  ;; Markdown is for the answers: Tether's own lines keep their faces.
  (font-lock-add-keywords nil '((tether-chat--next-own-text
                                 (0 (get-text-property (match-beginning 0) 'font-lock-face) t)))
                          'append)
  (setq-local tether-chat--output (make-marker))
  (setq-local tether-chat--input (make-marker))
  (add-hook 'completion-at-point-functions #'tether-chat--complete-command nil t))

;;; Writing

(defun tether-chat--next-own-text (limit)
  "Font-lock matcher: the next run of Tether's own text of one face before LIMIT."
  (when-let ((start (text-property-any (point) limit 'tether-chat-own t)))
    (let ((end (min (next-single-property-change start 'font-lock-face nil limit)
                    (or (text-property-not-all start limit 'tether-chat-own t) limit))))
      (set-match-data (list start end))
      (goto-char end)
      t)))

(defun tether-chat--insert (text &rest properties)
  "Insert TEXT with PROPERTIES where the output goes, read-only."
  (let ((inhibit-read-only t)
        (text (apply #'propertize text 'read-only t 'rear-nonsticky t properties)))
    ;; Text with a face of its own is Tether's, not the model's Markdown.
    (when (text-property-not-all 0 (length text) 'font-lock-face nil text)
      (put-text-property 0 (length text) 'tether-chat-own t text))
    (save-excursion
      (goto-char tether-chat--output)
      (insert text)
      (set-marker tether-chat--output (point)))))

(defun tether-chat--fresh-line ()
  "Start a new output line unless at the start of one."
  (unless (memq (char-before tether-chat--output) '(nil ?\n))
    (tether-chat--insert "\n")))

(defun tether-chat--line (text &rest properties)
  "Insert TEXT as a line of its own, with PROPERTIES."
  (tether-chat--fresh-line)
  (apply #'tether-chat--insert (concat text "\n") properties))

(defun tether-chat--insert-prompt ()
  "Put a fresh prompt at the end; output goes above it."
  (let ((inhibit-read-only t))
    (goto-char (point-max))
    (set-marker tether-chat--output (point))
    ;; Front-sticky: nothing can be typed between the output and the prompt.
    (insert (propertize tether-chat-prompt 'read-only t 'rear-nonsticky t
                        'front-sticky '(read-only) 'font-lock-face 'tether-prompt-face
                        'tether-chat-own t))
    (set-marker tether-chat--input (point))))

(defun tether-chat--user-idle-p ()
  "Whether the user waits at an empty prompt (point at its end)."
  (and (= (point) (point-max))
       (string-blank-p (buffer-substring-no-properties tether-chat--input (point-max)))))

;;; Runs

(defun tether-chat--buffer ()
  "The `*tether-chat*' buffer, created when needed."
  (or (get-buffer "*tether-chat*")
      (with-current-buffer (get-buffer-create "*tether-chat*")
        (tether-chat-mode)
        (tether-chat--intro)
        (current-buffer))))

(defun tether-chat--intro ()
  "The chat's first lines and its prompt."
  (let ((inhibit-read-only t))
    (erase-buffer)
    (insert (propertize
             (substitute-command-keys
              "Tether chat — RET sends, / lists the session commands, \
\\[tether-chat-cancel] stops the run,\n\\[tether-chat-goto-approval] goes to a waiting \
approval.\n\n")
             'read-only t 'rear-nonsticky t 'font-lock-face 'tether-outcome-face))
    (tether-chat--insert-prompt)))

;;;###autoload
(defun tether-chat (&optional new)
  "Open the Tether chat of this project; with prefix argument NEW, a new session."
  (interactive "P")
  (let ((from (current-buffer))
        (root (tether--root)))
    (with-current-buffer (tether-chat--buffer)
      (when (and new (not tether-chat--run-id))
        (setq tether-chat--session-id nil)
        (tether-chat--intro))
      (setq default-directory root)
      (when (buffer-file-name from) (setq tether-chat--context from))
      (pop-to-buffer (current-buffer))
      (goto-char (point-max)))))

(defun tether-chat-send ()
  "Send the input at the prompt; on a button, push it."
  (interactive)
  (cond
   ((button-at (point)) (push-button))
   ((< (point) tether-chat--input) (goto-char (point-max)))
   ((or tether-chat--run-id tether-chat--command)
    (message "%s" (substitute-command-keys
                   "Tether is still answering: \\[tether-chat-cancel] stops it")))
   (t
    (let ((prompt (string-trim (buffer-substring-no-properties tether-chat--input (point-max)))))
      (unless (string-empty-p prompt)
        ;; A server that cannot start: the message goes as a prompt, whose run says why.
        (if-let ((command (and (string-prefix-p "/" prompt)
                               (tether-chat-commands-parse
                                prompt (ignore-errors (tether-connection))))))
            (apply #'tether-chat--run-command command)
          (tether-chat--start prompt)))))))

(defun tether-chat--renderer ()
  "How the chat shows a run's events: text as it streams, and the decisions taken
without asking (the others close their approval's block)."
  (tether-render-create :stream t :approvals t))

(defun tether-chat--commit-input ()
  "Turn the input into transcript, with a fresh prompt below it."
  (let ((inhibit-read-only t))
    (goto-char (point-max))
    (insert "\n")
    (add-text-properties tether-chat--output (point-max)
                         '(read-only t rear-nonsticky t font-lock-face tether-prompt-face
                                     tether-chat-own t))
    (tether-chat--insert-prompt)))

(defun tether-chat--start (prompt)
  "Turn the input into transcript and run PROMPT in this chat's session."
  (tether-chat--commit-input)
  (let* ((chat (current-buffer))
         (context (and (buffer-live-p tether-chat--context)
                       (with-current-buffer tether-chat--context (tether--context))))
         (run-id (tether--new-run-id "chat")))
    (setq tether-chat--run-id run-id
          tether-chat--render (tether-chat--renderer))
    (condition-case err
        (tether--start-run
         (tether-connection)
         (append (list :prompt prompt :runId run-id)
                 (and tether-chat--session-id (list :sessionId tether-chat--session-id))
                 (and context (list :context context)))
         :on-event (lambda (event) (tether-chat--in chat #'tether-chat--event event))
         :on-approval (lambda (approval &optional go)
                        (tether-chat--in chat #'tether-chat--show-approval approval go))
         :on-finished (lambda (result) (tether-chat--in chat #'tether-chat--finished result)))
      (error (setq tether-chat--run-id nil)
             (tether-chat--line (format "✗ %s" (error-message-string err))
                                'font-lock-face 'tether-failed-face)))))

(defun tether-chat--in (chat function &rest args)
  "Call FUNCTION with ARGS in the CHAT buffer, if it is still there."
  (when (buffer-live-p chat)
    (with-current-buffer chat (apply function args))))

(defun tether-chat--event (event)
  "Show the run's EVENT in the chat."
  (when (equal (plist-get event :kind) "run-started")
    (setq tether-chat--session-id (plist-get event :sessionId)))
  (let ((items (tether-render-event tether-chat--render event)))
    (tether-render-replace-progress (current-buffer) items)
    (dolist (item items)
      (cond ((stringp item) (tether-chat--line item))
            ((eq (car item) 'thinking)  ; the model's thinking: a block, collapsed
             (set-marker tether-chat--output
                         (tether-render-think item tether-chat--output
                                              '(read-only t rear-nonsticky t
                                                          tether-chat-own t))))
            (t (tether-chat--insert (cdr item)))))))  ; streamed text

(defun tether-chat--finished (result)
  "The chat's run ended with RESULT: later prompts continue its session."
  (setq tether-chat--run-id nil)
  (dolist (item (and tether-chat--render (tether-render-flush tether-chat--render)))
    (tether-chat--insert (cdr item)))  ; a carriage return the text ended with
  (tether-chat--fresh-line)  ; the prompt starts on its own line, after the answer
  (when-let ((session (plist-get result :sessionId)))
    (setq tether-chat--session-id session))
  (when (equal (plist-get result :outcome) "error")
    (tether-chat--line (format "✗ %s" (tether-render-shown
                                            (or (plist-get result :error) "the run failed") t))
                       'font-lock-face 'tether-failed-face))
  (tether-chat--insert "\n"))  ; a blank line before the prompt

(defun tether-chat-cancel ()
  "Stop the chat's run (or stop waiting for its session command)."
  (interactive)
  (cond
   (tether-chat--command
    (tether-chat--line (format "✗ /%s: no longer waited for" tether-chat--command)
                       'font-lock-face 'tether-failed-face)
    (setq tether-chat--command nil)
    (tether-chat--insert "\n"))
   ((not tether-chat--run-id)
    (message "Tether: no run to stop"))
   (t
    (jsonrpc-async-request (tether-connection) 'agent/cancel
                           (list :runId tether-chat--run-id) :success-fn #'ignore))))

;;; Session commands

(defun tether-chat--complete-command ()
  "`completion-at-point-functions': a session command as the message's first word."
  (when (and (markerp tether-chat--input) (marker-position tether-chat--input))
    (tether-chat-commands-completion tether-chat--input #'tether-connection)))

(defun tether-chat-slash ()
  "Insert `/'; at an empty prompt, list the session commands to complete."
  (interactive)
  (let ((first (and (= (point) (point-max)) (tether-chat--user-idle-p))))
    (call-interactively #'self-insert-command)
    (when first
      (completion-at-point))))

(defun tether-chat--run-command (name argument serverp)
  "Run the session command NAME with ARGUMENT (a string or nil); show what it says.
SERVERP: the server's command (`agent/command'), else the chat's own."
  (tether-chat--commit-input)
  (setq tether-chat--command name)
  (let* ((chat (current-buffer))
         (done (lambda (lines &optional session new-session)
                 (tether-chat--in chat #'tether-chat--command-done name lines session
                                  new-session))))
    (condition-case err
        (let ((connection (tether-connection)))
          (cond
           (serverp
            (tether--sync-all connection)  ; /undo checks the text the server knows
            (jsonrpc-async-request
             connection 'agent/command
             (append (list :name name)
                     (and tether-chat--session-id (list :sessionId tether-chat--session-id))
                     (and argument (list :argument argument)))
             :timeout nil
             :success-fn (lambda (result)
                           (funcall done (split-string (or (plist-get result :message) "") "\n")
                                    nil (eq (plist-get result :newSession) t)))
             :error-fn (lambda (error)
                         (funcall done (list (format "✗ /%s: %s" name
                                                     (plist-get error :message)))))))
           ((equal name "resume")
            (tether-chat-commands-resume connection argument tether-chat--session-id done))
           ((equal name "rules")
            (tether-chat-commands-rules connection argument tether-chat--session-id done))))
      (error (funcall done (list (format "✗ /%s: %s" name (error-message-string err))))))))

(defun tether-chat--command-done (name lines session new-session)
  "The session command NAME said LINES.
Go on with SESSION, or with a new session if NEW-SESSION."
  (when (equal tether-chat--command name)
    (setq tether-chat--command nil)
    (cond (new-session (setq tether-chat--session-id nil))
          (session (setq tether-chat--session-id session)))
    (dolist (line lines)
      (tether-chat--line line 'font-lock-face (if (string-prefix-p "✗" line)
                                                  'tether-failed-face
                                                'tether-outcome-face)))
    (tether-chat--insert "\n")))

;;; Approvals

(defun tether-chat--preview-lines (approval)
  "APPROVAL's diff or command as indented lines with diff faces."
  (let ((preview (plist-get (tether--approval-params approval) :preview)))
    (if (equal (plist-get preview :kind) "command")
        (concat (propertize (format "  $ %s\n" (plist-get preview :command))
                            'font-lock-face 'tether-tool-face)
                (format "  (in %s)\n" (plist-get preview :cwd)))
      (mapconcat (lambda (line)
                   (propertize (concat "  " line "\n") 'font-lock-face
                               (cond ((string-prefix-p "+++" line) 'diff-file-header)
                                     ((string-prefix-p "---" line) 'diff-file-header)
                                     ((string-prefix-p "+" line) 'diff-added)
                                     ((string-prefix-p "-" line) 'diff-removed)
                                     ((string-prefix-p "@@" line) 'diff-hunk-header))))
                 ;; the files' text: escaped by the server, and here again
                 (split-string (string-trim-right
                                (tether-render-shown (or (plist-get preview :diff) "")))
                               "\n")
                 ""))))

(defun tether-chat--button (label decision approval)
  "Insert a button LABEL answering APPROVAL with DECISION (an overlay button)."
  (let ((start (point)))
    (insert label)
    (make-button start (point) 'action (lambda (_) (tether-chat--decide approval decision))
                 'keymap tether-chat-approval-map 'tether-approval approval
                 'follow-link t)))

(defun tether-chat--show-approval (approval &optional go)
  "Show APPROVAL inline; with GO (or when the user waits at the prompt), go to it."
  (unless (tether-chat--block approval)
    (tether-chat--insert-approval approval))
  (let ((start (overlay-start (tether-chat--block approval)))
        (window (get-buffer-window (current-buffer) t)))
    (cond
     (go (pop-to-buffer (current-buffer))
         (goto-char (tether-chat--first-button start)))
     ((and window (eq window (selected-window)) (tether-chat--user-idle-p))
      (goto-char (tether-chat--first-button start)))
     (t (message "Tether wants to: %s — %s in *tether-chat* to answer it"
                 (tether--approval-title approval)
                 (substitute-command-keys "\\[tether-goto-approval]"))))))

(defun tether-chat--insert-approval (approval)
  "Insert APPROVAL's block: title, change, buttons; its keys work on it alone."
  (tether-chat--fresh-line)
  (let ((inhibit-read-only t)
        (start (marker-position tether-chat--output)))
    (save-excursion
      (goto-char start)
      (insert (propertize (format "⚠ Tether wants to: %s\n" (tether--approval-title approval))
                          'font-lock-face 'tether-chat-approval-face))
      (insert (tether-chat--preview-lines approval))
      (put-text-property start (point) 'tether-chat-own t)
      (insert (propertize "  " 'tether-chat-buttons t))
      (tether-chat--button "[Allow]" "allow" approval)
      (insert " ")
      (tether-chat--button "[Allow always]" "allow-always" approval)
      (insert " ")
      (tether-chat--button "[Deny]" "deny" approval)
      (if (not (tether--change-set-p
                (plist-get (tether--approval-params approval) :preview)))
          (insert "   a allow · A always · d deny (with a reason)\n")
        ;; several files: reviewed whole in diff-mode, file by file
        (insert " ")
        (tether-chat--button "[Review]" "review" approval)
        (insert "   a allow · A always · d deny (with a reason) · v review in diff-mode\n"))
      (put-text-property start (point) 'read-only t)
      (let ((block (make-overlay start (point))))
        (overlay-put block 'keymap tether-chat-approval-map)
        (overlay-put block 'tether-approval approval)
        (setf (tether--approval-inline approval) block))
      (set-marker tether-chat--output (point)))
    (setf (tether--approval-on-close approval)
          (let ((chat (current-buffer)))
            (lambda (approval how)
              (tether-chat--in chat #'tether-chat--approval-closed approval how))))))

(defun tether-chat--block (approval)
  "The overlay of APPROVAL's block in this chat, or nil."
  (let ((block (tether--approval-inline approval)))
    (and (overlayp block) (eq (overlay-buffer block) (current-buffer)) block)))

(defun tether-chat--first-button (start)
  "The position of the first button after START."
  (if-let ((button (next-button start))) (button-start button) start))

(defun tether-chat--approval-closed (approval how)
  "Replace the buttons of APPROVAL's block by HOW it closed; its keys end."
  (when-let ((block (tether-chat--block approval)))
    (let ((inhibit-read-only t)
          (inside (eq (get-char-property (point) 'tether-approval) approval))
          (start (overlay-start block))
          (decision (plist-get how :decision))
          (feedback (plist-get how :feedback)))
      (remove-overlays start (overlay-end block) 'tether-approval approval)
      (save-excursion
        (when-let ((buttons (text-property-any start (point-max) 'tether-chat-buttons t)))
          (goto-char buttons)
          (let* ((end (min (point-max) (1+ (line-end-position))))
                 (last (= end tether-chat--output)))  ; the block ends the output
            (delete-region (line-beginning-position) end)
            (insert (propertize
                     (cond ((member decision '("allow" "allow-always"))
                            (format "  ✓ %s\n" decision))
                           (decision
                            (format "  ✗ denied%s\n" (if feedback (format ": %s" feedback) "")))
                           (t (format "  ✗ withdrawn (%s)\n" (plist-get how :withdrawn))))
                     'read-only t 'tether-chat-own t
                     'font-lock-face (if (member decision '("allow" "allow-always"))
                                         'tether-ok-face 'tether-failed-face)))
            (when last (set-marker tether-chat--output (point))))))
      (when inside (goto-char (point-max))))))

(defun tether-chat--approval-here ()
  "The approval at point, or nil."
  (get-char-property (point) 'tether-approval))

(defun tether-chat--decide (approval decision)
  "Answer APPROVAL with DECISION (deny asks for a reason; review shows it)."
  (cond ((equal decision "deny") (tether--deny-with-reason approval))
        ((equal decision "review") (tether-review-approval approval))
        (t (tether--answer approval decision))))

(defun tether-chat--decide-here (decision)
  "Answer the approval at point with DECISION."
  (if-let ((approval (tether-chat--approval-here)))
      (tether-chat--decide approval decision)
    (message "Tether: no approval here")))

(defun tether-chat-allow ()
  "Allow the approval at point."
  (interactive)
  (tether-chat--decide-here "allow"))

(defun tether-chat-allow-always ()
  "Allow the approval at point, and such calls for the rest of the session."
  (interactive)
  (tether-chat--decide-here "allow-always"))

(defun tether-chat-deny ()
  "Deny the approval at point, with a reason the model is given (optional)."
  (interactive)
  (tether-chat--decide-here "deny"))

(defun tether-chat-review ()
  "Review the approval at point in `*tether-approval*' (`diff-mode').
It is answered there (or here)."
  (interactive)
  (tether-chat--decide-here "review"))

(defun tether-chat-goto-approval ()
  "Go to the chat's oldest waiting approval."
  (interactive)
  (if-let ((approval (seq-find #'tether-chat--block tether--approvals)))
      (goto-char (tether-chat--first-button (overlay-start (tether-chat--block approval))))
    (message "Tether: no approval is waiting here")))

(provide 'tether-chat)
;;; tether-chat.el ends here
