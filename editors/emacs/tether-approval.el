;;; tether-approval.el --- Tether's approvals: *tether-approval*, the minibuffer  -*- lexical-binding: t; -*-

;;; Commentary:

;; An approval is answered later, from `*tether-approval*', a chat buffer or
;; `tether-approve', never by a minibuffer read inside the request handler: a
;; blocking read there stalls every message behind it (jsonrpc 1.0.14 would even
;; re-enter its process filter), so a `$/cancelRequest' could not close the prompt.
;;
;; Nothing takes the focus when an approval arrives: the user may be typing, and
;; a key meant for their buffer must not answer it (nor the reverse).  Once they
;; answer in `*tether-approval*', its window stays, selected, until the run ends,
;; and the run's next approval appears in it: the next `a' answers that one.

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'subr-x)
(require 'tether-render)

(declare-function tether--log "tether" (format-string &rest args))
(declare-function tether--run-approval-function "tether" (run-id))
(declare-function tether-running-p "tether" ())

(defvar tether-approval-choices
  '(("allow" . "allow") ("allow-always" . "allow-always") ("deny" . "deny"))
  "Minibuffer answers to an approval and the decisions they mean.")

(cl-defstruct (tether--approval (:constructor tether--approval-create))
  "An `agent/approve' request waiting for the user.
INLINE is non-nil when a chat buffer shows it (not `*tether-approval*');
ON-CLOSE, when set, is called with the approval and how it closed:
\(:decision D :feedback F) or (:withdrawn REASON)."
  connection id run-id title params inline on-close)

(defvar tether--approvals nil
  "Approvals waiting for an answer, oldest first.")

(defvar tether--shown nil
  "The approval `*tether-approval*' shows, or nil.")

(defvar-local tether--reviewing nil
  "Non-nil in `*tether-approval*' while it shows an approval a chat shows too.")

(defvar tether--reading nil
  "(APPROVAL . MINIBUFFER-DEPTH) while the minibuffer reads about APPROVAL.")

(cl-defstruct (tether--question (:constructor tether--question-create))
  "An `agent/ask' request (the model's question), answered later from the minibuffer."
  connection id params)

(defvar tether--questions nil
  "Questions not answered yet.")

(defvar tether--asking nil
  "(QUESTION . MINIBUFFER-DEPTH) while the minibuffer reads QUESTION's answer.")

(defvar tether--ask-retry-seconds 0.5
  "How often a question looks again for a minibuffer that was busy.")

(defclass tether-process-connection (jsonrpc-process-connection) ()
  "A connection to `tether serve' whose `agent/approve' and `agent/ask' are answered later.")

(cl-defmethod jsonrpc-connection-send ((connection tether-process-connection) &rest args
                                       &key id result &allow-other-keys)
  "Send ARGS, except the reply to an approval: register it to answer later."
  ;; The request handler has no id; its reply, sent right after it returns, has it.
  (cond ((and id (tether--approval-p result))
         (setf (tether--approval-id result) id
               (tether--approval-connection result) connection)
         (setq tether--approvals (append tether--approvals (list result)))
         ;; Outside jsonrpc's own error handling: a display failure must not stop it.
         (with-demoted-errors "Tether: showing the approval failed: %S"
           (tether--approval-arrived result)))
        ((and id (tether--question-p result))
         (setf (tether--question-id result) id
               (tether--question-connection result) connection)
         (push result tether--questions)
         ;; Asked from the command loop, not from the process filter (see Commentary).
         (run-at-time 0 nil #'tether--ask-question result))
        (t (apply #'cl-call-next-method connection args))))

(defun tether--approve (params)
  "`agent/approve': the approval, returned in place of an answer.
`jsonrpc-connection-send' of `tether-process-connection' keeps it instead
of replying; `tether--answer' replies when the user decides."
  (tether--approval-create :run-id (plist-get params :runId)
                           :title (plist-get params :title) :params params))

(defun tether--approval-arrived (approval)
  "Show APPROVAL where its run shows approvals: a chat, else `*tether-approval*'."
  (let ((show-inline (tether--run-approval-function (tether--approval-run-id approval))))
    (if show-inline
        (progn (setf (tether--approval-inline approval) t)
               (funcall show-inline approval))
      (tether--show-approval))))

(defun tether-pending-approvals ()
  "The titles of the approvals waiting for an answer, oldest first."
  (mapcar #'tether--approval-title tether--approvals))

;;; The *tether-approval* buffer

(defvar tether-approval-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map "a" #'tether-approval-allow)
    (define-key map "A" #'tether-approval-allow-always)
    (define-key map "d" #'tether-approval-deny)
    (define-key map "q" #'tether-approval-quit)
    map)
  "Keys of the `*tether-approval*' buffer.")

(define-minor-mode tether-approval-mode
  "The `*tether-approval*' buffer: a allow, A always, d deny with a reason, q deny."
  :lighter " Approve" :keymap tether-approval-mode-map
  ;; diff-mode's read-only keys (A ediff, q quit-window) override minor modes: go first.
  (setq-local minor-mode-overriding-map-alist
              (cons (cons 'tether-approval-mode tether-approval-mode-map)
                    (assq-delete-all 'tether-approval-mode
                                     (copy-sequence minor-mode-overriding-map-alist)))))

(defun tether--approval-keys-hint ()
  "How to reach the approval from anywhere, as the user's keys say it."
  (substitute-command-keys "\\[tether-goto-approval]"))

(defun tether--next-shown ()
  "The oldest approval `*tether-approval*' may show (chat buffers show their own)."
  (seq-find (lambda (approval) (not (tether--approval-inline approval))) tether--approvals))

(defun tether--show-approval ()
  "Show the oldest waiting approval in `*tether-approval*'.
With none: while a run goes on and the user is in that window (they answered
there), keep it, saying the next one will appear there; else close it."
  (let* ((approval (tether--next-shown))
         (buffer (get-buffer "*tether-approval*"))
         (window (and buffer (get-buffer-window buffer t))))
    (setq tether--shown approval)
    (cond
     (approval (tether--render-approval approval))
     ((and window (eq window (selected-window)) (tether-running-p)
           ;; a chat's run: its next approval appears in the chat, not here
           (not (buffer-local-value 'tether--reviewing buffer)))
      (tether--render-waiting buffer))
     (buffer (tether--close-approval-buffer buffer)))))

(defun tether--change-set-p (preview)
  "Whether PREVIEW is a change of several files (a rename): a diff, no window.
The server sends such an approval because `changeSets' is declared; it is
shown whole, in `diff-mode' (`n'/`p' hunk by hunk, `N'/`P' file by file)."
  (and (equal (plist-get preview :kind) "diff")
       (stringp (plist-get preview :diff))
       (not (plist-get preview :proposed))))

(defun tether--render-approval (approval)
  "Show APPROVAL in `*tether-approval*' without selecting it (unless it was).
The diff and the title come escaped by the server and are escaped again
here (`tether-render-shown' leaves escaped text as it is)."
  (let* ((preview (plist-get (tether--approval-params approval) :preview))
         (title (tether-render-shown (or (tether--approval-title approval) "") t))
         (several (tether--change-set-p preview)))
    (with-current-buffer (get-buffer-create "*tether-approval*")
      (let ((inhibit-read-only t))
        (erase-buffer)
        (insert (if (equal (plist-get preview :kind) "command")
                    ;; An MCP server's tool is shown as a call, not as a shell command.
                    (format "%s%s\n(in %s)\n"
                            (if (string-prefix-p
                                 "mcp__" (or (plist-get (tether--approval-params approval)
                                                        :tool)
                                             ""))
                                ""
                              "$ ")
                            (plist-get preview :command)
                            (plist-get preview :cwd))
                  (tether-render-shown (or (plist-get preview :diff) ""))))
        (when (fboundp 'diff-mode) (diff-mode))
        (tether-approval-mode 1)
        (setq tether--reviewing (and (tether--approval-inline approval) t))
        ;; The diff's paths are the workspace's: `RET' (`diff-goto-source') finds them.
        (when-let* ((connection (tether--approval-connection approval))
                    (root (ignore-errors
                            (process-get (jsonrpc--process connection) 'tether-root))))
          (setq default-directory (file-name-as-directory root)))
        (setq buffer-read-only t
              header-line-format
              ;; a mode-line construct: a `%' of the title is shown as it is
              (string-replace
               "%" "%%"
               (format "Tether wants to: %s — a allow · A always · d deny (with a reason)%s"
                       title (if several " · n/p hunk · N/P file" ""))))
        (goto-char (point-min)))
      (let ((window (display-buffer (current-buffer))))
        (if (eq window (selected-window))
            (message "Tether wants to: %s — a allow · A always · d deny" title)
          (message "Tether wants to: %s — %s to answer it (or M-x tether-approve)"
                   title (tether--approval-keys-hint)))))))

(defun tether--render-waiting (buffer)
  "Say in BUFFER that the answer was sent and the run's next approval comes here."
  (with-current-buffer buffer
    (let ((inhibit-read-only t))
      (erase-buffer)
      (insert "Answered.  The run goes on: its next approval will appear here.\n")
      (setq header-line-format "Tether: no approval waiting — q closes this window"))))

(defun tether--close-approval-buffer (buffer)
  "Quit BUFFER's window and kill it."
  (when-let ((window (get-buffer-window buffer t)))
    (ignore-errors (quit-window nil window)))
  (kill-buffer buffer))

(defun tether-review-approval (approval)
  "Show APPROVAL, waiting in a chat, in `*tether-approval*' too, and go there.
Its keys there answer it as the chat's do; a diff is in `diff-mode'
\(`n'/`p' hunk by hunk, `N'/`P' file by file).  Answered or withdrawn,
the buffer closes and the chat says how it ended."
  (if (not (memq approval tether--approvals))
      (message "Tether: that approval is no longer waiting")
    (setq tether--shown approval)
    (tether--render-approval approval)
    (select-window (display-buffer "*tether-approval*"))))

;;;###autoload
(defun tether-goto-approval ()
  "Go to the waiting approval: `*tether-approval*', or its chat buffer."
  (interactive)
  (let ((approval (car tether--approvals)))
    (cond
     ((null approval) (message "Tether: no approval is waiting"))
     ((tether--approval-inline approval)
      (funcall (tether--run-approval-function (tether--approval-run-id approval))
               approval 'go))
     (t (tether--show-approval)
        (select-window (display-buffer "*tether-approval*"))
        (message "Tether wants to: %s — a allow · A always · d deny"
                 (tether--approval-title approval))))))

;;; Answers

(defun tether--close-approval (approval reason)
  "Forget APPROVAL without answering it and tell the user why (REASON)."
  (when (memq approval tether--approvals)
    (setq tether--approvals (delq approval tether--approvals))
    (tether--log "  withdrawn (%s): %s" reason (tether--approval-title approval))
    (message "Tether: approval withdrawn (%s): %s" reason (tether--approval-title approval))
    (when (tether--approval-on-close approval)
      (funcall (tether--approval-on-close approval) approval (list :withdrawn reason)))
    (tether--show-approval)
    (when (eq (car tether--reading) approval)
      (tether--leave-minibuffer (lambda () (eq (car tether--reading) approval))
                                (cdr tether--reading)))))

(defun tether--withdraw (connection id)
  "`$/cancelRequest': the server no longer waits for request ID."
  (when-let ((approval (seq-find (lambda (approval)
                                   (and (eq (tether--approval-connection approval) connection)
                                        (equal (tether--approval-id approval) id)))
                                 tether--approvals)))
    (tether--close-approval approval "the server stopped waiting"))
  (when-let ((question (seq-find (lambda (question)
                                   (and (eq (tether--question-connection question) connection)
                                        (equal (tether--question-id question) id)))
                                 tether--questions)))
    (setq tether--questions (delq question tether--questions))
    (tether--log "  question withdrawn")
    (message "Tether: the question was withdrawn")
    (when (eq (car tether--asking) question)
      (tether--leave-minibuffer (lambda () (eq (car tether--asking) question))
                                (cdr tether--asking)))))

(defun tether--leave-minibuffer (still depth)
  "Quit the minibuffer read at DEPTH if STILL returns non-nil by then.
From the command loop, not from a process filter."
  (run-at-time 0 nil (lambda ()
                       (when (and (funcall still) (= (minibuffer-depth) depth))
                         (abort-recursive-edit)))))

(defun tether--close-run-approvals (connection run-id reason)
  "Close every approval of CONNECTION's run RUN-ID (all of CONNECTION's when nil)."
  (dolist (approval (copy-sequence tether--approvals))
    (when (and (eq (tether--approval-connection approval) connection)
               (or (null run-id) (equal (tether--approval-run-id approval) run-id)))
      (tether--close-approval approval reason))))

(defun tether--answer (approval decision &optional feedback)
  "Send DECISION and FEEDBACK (for the model) for APPROVAL if still awaited."
  (if (not (memq approval tether--approvals))
      (message "Tether: that approval was withdrawn; nothing was sent")
    (setq tether--approvals (delq approval tether--approvals))
    (tether--log "  %s: %s%s" decision (tether--approval-title approval)
                 (if feedback (format " (%s)" feedback) ""))
    (when (jsonrpc-running-p (tether--approval-connection approval))
      (jsonrpc-connection-send (tether--approval-connection approval)
                               :id (tether--approval-id approval)
                               :result (append (list :decision decision)
                                               (and feedback (list :feedback feedback)))))
    (when (tether--approval-on-close approval)
      (funcall (tether--approval-on-close approval) approval
               (list :decision decision :feedback feedback)))
    (tether--show-approval)))

(defun tether--read-about (approval read)
  "Call READ (a minibuffer read) about APPROVAL; nil when quit or withdrawn."
  (minibuffer-with-setup-hook
      (lambda () (setq tether--reading (cons approval (minibuffer-depth))))
    (unwind-protect
        (condition-case nil
            (funcall read)
          (quit nil))
      (setq tether--reading nil))))

(defun tether--deny-with-reason (approval)
  "Ask why APPROVAL is denied, then deny it with that reason for the model.
An empty reason denies without one; \\[keyboard-quit] answers nothing."
  (let ((reason (tether--read-about
                 approval
                 (lambda ()
                   (read-string (format "Tether: deny %s — why? (for the model, RET for no reason) "
                                        (tether--approval-title approval)))))))
    (when (and reason (memq approval tether--approvals))
      (tether--answer approval "deny" (and (not (string-blank-p reason))
                                           (string-trim reason))))))

(defun tether--decide (decision)
  "Answer the approval `*tether-approval*' shows with DECISION."
  (if (and tether--shown (memq tether--shown tether--approvals))
      (if (equal decision "deny-with-reason")
          (tether--deny-with-reason tether--shown)
        (tether--answer tether--shown decision))
    (message "Tether: no approval is waiting")))

(defun tether-approval-allow ()
  "Allow the change shown."
  (interactive)
  (tether--decide "allow"))

(defun tether-approval-allow-always ()
  "Allow the change shown, and such changes for the rest of the session."
  (interactive)
  (tether--decide "allow-always"))

(defun tether-approval-deny ()
  "Deny the change shown, with a reason the model is given (optional)."
  (interactive)
  (tether--decide "deny-with-reason"))

(defun tether-approval-quit ()
  "Deny the change shown with no reason; with none waiting, close the window."
  (interactive)
  (if (and tether--shown (memq tether--shown tether--approvals))
      (tether--answer tether--shown "deny")
    (when-let ((buffer (get-buffer "*tether-approval*")))
      (tether--close-approval-buffer buffer))))

;;;###autoload
(defun tether-approve ()
  "Answer the oldest waiting approval in the minibuffer (`deny' asks for a reason).
The prompt closes by itself when the server withdraws that approval."
  (interactive)
  (let ((approval (car tether--approvals)))
    (if (null approval)
        (message "Tether: no approval is waiting")
      (let ((answer (tether--read-about
                     approval
                     (lambda ()
                       (completing-read
                        (format "Tether wants to: %s — allow? " (tether--approval-title approval))
                        tether-approval-choices nil t)))))
        (when answer
          (let ((decision (or (cdr (assoc answer tether-approval-choices)) "deny")))
            (if (equal decision "deny")
                (tether--deny-with-reason approval)
              (tether--answer approval decision))))))))

(defun tether--ask (params)
  "`window/showMessageRequest': pick one of PARAMS' actions in the minibuffer."
  (let* ((titles (mapcar (lambda (action) (plist-get action :title))
                         (plist-get params :actions)))
         (answer (completing-read (concat (plist-get params :message) " ") titles nil t)))
    (and (member answer titles) (list :title answer))))

(defun tether--ask-user (params)
  "`agent/ask': the model's question (PARAMS), returned in place of an answer.
`jsonrpc-connection-send' of `tether-process-connection' keeps it and asks
it from the command loop (`tether--ask-question'), which replies."
  (tether--question-create :params params))

(defun tether--ask-question (question)
  "Ask QUESTION in the minibuffer and send the answer, unless it was withdrawn.
With choices, `completing-read' over them (a typed answer of one's own
too, unless the model takes only a choice); without, `read-string'.
The question comes escaped by the server; it is shown on one line.
A secret (a command's password prompt) is read with `read-passwd': not shown.
\\[keyboard-quit] or an empty answer answers nothing (RET alone answers a command's
question whose default it takes: `:enterAlone'); a question the server
withdraws closes its prompt and is not answered.  While the minibuffer is
busy with something else, the question waits for it."
  (cond
   ((not (memq question tether--questions)))  ; withdrawn before it was asked
   ((and (active-minibuffer-window) (not enable-recursive-minibuffers))
    (run-at-time tether--ask-retry-seconds nil #'tether--ask-question question))
   (t
    (let* ((params (tether--question-params question))
           (question-text (replace-regexp-in-string
                           "[\n\t]+" " " (or (plist-get params :question) "")))
           (prompt (format "Tether asks: %s " question-text))
           (choices (append (plist-get params :choices) nil))
           (only-choices (and choices (eq (plist-get params :freeText) :json-false)))
           (answer (minibuffer-with-setup-hook
                       (lambda () (setq tether--asking (cons question (minibuffer-depth))))
                     (unwind-protect
                         (condition-case nil
                             (cond (choices (completing-read prompt choices nil only-choices))
                                   ((eq (plist-get params :secret) t) (read-passwd prompt))
                                   (t (read-string prompt)))
                           (quit nil))
                       (setq tether--asking nil))))
           (connection (tether--question-connection question)))
      (when (memq question tether--questions)  ; not withdrawn meanwhile
        (setq tether--questions (delq question tether--questions))
        (when (jsonrpc-running-p connection)
          (jsonrpc-connection-send
           connection :id (tether--question-id question)
           :result (cond ((and (stringp answer) (not (string-empty-p (string-trim answer))))
                          (list :answer answer))
                         ;; A command's question: RET alone is an answer (its default).
                         ((and (stringp answer) (eq (plist-get params :enterAlone) t))
                          (list :answer ""))
                         (t (make-hash-table))))))))))

(provide 'tether-approval)
;;; tether-approval.el ends here
