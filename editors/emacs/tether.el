;;; tether.el --- Run the Tether coding agent from Emacs  -*- lexical-binding: t; -*-

;; Version: 0.1
;; Package-Requires: ((emacs "28.1") (jsonrpc "1.0.14"))
;; Keywords: tools, convenience
;; URL: https://github.com/ (this repository: editors/emacs)

;;; Commentary:

;; `tether serve' speaks LSP.  Eglot (up to and including 1.x) runs one
;; language server per major mode, so Tether started by Eglot would replace
;; the user's Python or Rust server.  This package therefore talks to
;; `tether serve' with `jsonrpc' directly (the library Eglot itself is built
;; on), next to whatever Eglot runs:
;;
;;   M-x tether-run      ask the agent (asynchronous; unsaved buffers are sent first)
;;   M-x tether-cancel   stop the last run
;;   M-x tether-approve  answer the waiting approval in the minibuffer
;;
;;   M-x tether-chat     a conversation in `*tether-chat*' (tether-chat.el)
;;   M-x tether-jobs     the background jobs, each one's output as it comes (tether-jobs.el)
;;
;; Each approval shows the change in `*tether-approval*': `a' allows, `A' allows
;; always, `d' denies and asks for a reason the model is given, `q' denies (or
;; M-x tether-approve).  Nothing takes the focus: the echo area says how to go to
;; it (M-x tether-goto-approval).  Once you answer there, the window stays and
;; the run's next approval appears in it, still selected.  Nothing blocks while it
;; waits.  When the server withdraws it (`$/cancelRequest': no answer within
;; `approvalTimeoutSeconds', the run cancelled or ended) or its run finishes, the
;; buffer and an open prompt close, the echo area says "Tether: approval withdrawn
;; (...)", and no answer is ever sent for it.  The run's transcript goes to
;; `*tether*'.  The agent reads your buffers' problems from Flymake (which Eglot
;; fills from your language server).

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'json)
(require 'project)
(require 'subr-x)
(require 'url-util)
(require 'tether-approval)
(require 'tether-render)
(require 'tether-code)

;; The chat loads when first used: `(require 'tether)' is enough for `M-x tether-chat'
;; and a key bound to it, as for a package's autoloads.
(autoload 'tether-chat "tether-chat"
  "Open the Tether chat of this project; with prefix argument NEW, a new session." t)
(autoload 'tether-rewind "tether-rewind"
  "Go back to before a step of the session: its files, its conversation or both." t)
(autoload 'tether-jobs "tether-jobs"
  "List the background jobs of the chat's session (else of every session)." t)

(defgroup tether nil
  "The Tether coding agent."
  :group 'tools)

(defcustom tether-server-command '("tether" "serve")
  "The command that starts the Tether server."
  :type '(repeat string))

(defcustom tether-initialization-options nil
  "A plist sent as LSP `initializationOptions' (provider, model, autoApprove...)."
  :type 'sexp)

(defvar tether--connections (make-hash-table :test #'equal)
  "Running Tether connections by project root.")

(defvar tether-last-result nil
  "The result plist of the last finished run (outcome, answer, steps...).")

(defvar tether--last-run nil
  "(CONNECTION . RUN-ID) of the last run started.")

(defvar-local tether--version nil
  "The version of this buffer the server knows; nil when not opened there.")

(defvar-local tether--synced-tick nil
  "`buffer-chars-modified-tick' when the server last got this buffer's text.")

(defvar-local tether--connection nil
  "The connection this buffer was opened on.")

;;; Paths and positions

(defun tether--root ()
  "The root of the current project, else `default-directory'."
  (expand-file-name
   (if-let ((project (project-current))) (project-root project) default-directory)))

(defun tether--uri (file)
  "The file URI of FILE."
  (concat "file://"
          (url-hexify-string (expand-file-name file) (cons ?/ url-unreserved-chars))))

(defun tether--file (uri)
  "The file name of a file URI."
  (url-unhex-string (string-remove-prefix "file://" uri)))

(defun tether--point (position)
  "The point of an LSP POSITION (utf-32: characters are Emacs characters)."
  (save-excursion
    (goto-char (point-min))
    (forward-line (plist-get position :line))
    (min (+ (point) (plist-get position :character)) (line-end-position))))

(defun tether--position (point)
  "The LSP position of POINT."
  (save-excursion
    (goto-char point)
    (list :line (1- (line-number-at-pos)) :character (- point (line-beginning-position)))))

;;; Documents

(defun tether--buffers (root)
  "Live buffers visiting files under ROOT."
  (cl-remove-if-not
   (lambda (buffer)
     (when-let ((file (buffer-file-name buffer)))
       (file-in-directory-p file root)))
   (buffer-list)))

(defun tether--sync (connection buffer)
  "Send BUFFER's text to CONNECTION if the server has not seen it yet."
  (with-current-buffer buffer
    (let ((text (save-restriction (widen) (buffer-substring-no-properties (point-min) (point-max))))
          (uri (tether--uri buffer-file-name)))
      (cond
       ((not (and tether--version (eq tether--connection connection)))
        (setq tether--version 1 tether--connection connection)
        (add-hook 'kill-buffer-hook #'tether--closed nil t)
        (add-hook 'after-save-hook #'tether--saved nil t)
        (jsonrpc-notify connection 'textDocument/didOpen
                        (list :textDocument
                              (list :uri uri :languageId (tether--language)
                                    :version tether--version :text text))))
       ((not (eql tether--synced-tick (buffer-chars-modified-tick)))
        (setq tether--version (1+ tether--version))
        (jsonrpc-notify connection 'textDocument/didChange
                        (list :textDocument (list :uri uri :version tether--version)
                              :contentChanges (vector (list :text text))))))
      (setq tether--synced-tick (buffer-chars-modified-tick)))))

(defun tether--language ()
  "A language id for the current buffer."
  (string-remove-suffix "-mode" (symbol-name major-mode)))

(defun tether--sync-all (connection)
  "Send every changed buffer of CONNECTION's project (pending changes first)."
  (dolist (buffer (tether--buffers (process-get (jsonrpc--process connection) 'tether-root)))
    (tether--sync connection buffer)))

(defun tether--closed ()
  "`kill-buffer-hook': tell the server the document is closed."
  (when (and tether--version (jsonrpc-running-p tether--connection))
    (jsonrpc-notify tether--connection 'textDocument/didClose
                    (list :textDocument (list :uri (tether--uri buffer-file-name))))))

(defun tether--saved ()
  "`after-save-hook': the disk has the buffer's text."
  (when (and tether--version (jsonrpc-running-p tether--connection))
    (tether--sync tether--connection (current-buffer))
    (jsonrpc-notify tether--connection 'textDocument/didSave
                    (list :textDocument (list :uri (tether--uri buffer-file-name))))))

;;; Edits

(defun tether--apply-edit (connection params)
  "`workspace/applyEdit': apply PARAMS' edit to buffers; `applied' only when done."
  (condition-case err
      (progn
        (seq-doseq (change (plist-get (plist-get params :edit) :documentChanges))
          (if (equal (plist-get change :kind) "create")
              (let ((file (tether--file (plist-get change :uri))))
                (unless (file-exists-p file)
                  (make-directory (file-name-directory file) t)
                  (write-region "" nil file nil 'silent)))
            (tether--apply-document-edit connection change)))
        (list :applied t))
    (error (list :applied :json-false :failureReason (error-message-string err)))))

(defun tether--apply-document-edit (connection change)
  "Apply one TextDocumentEdit CHANGE, refusing a stale version."
  (let* ((document (plist-get change :textDocument))
         (buffer (find-file-noselect (tether--file (plist-get document :uri))))
         (version (plist-get document :version)))
    (with-current-buffer buffer
      (when tether--version  ; typing the server has not seen makes the edit stale
        (tether--sync connection buffer))
      (when (and version (not (eql version tether--version)))
        (error "Version %s is not the buffer's (%s)" version tether--version))
      (let ((edits (mapcar (lambda (edit)
                             (let ((range (plist-get edit :range)))
                               (list (copy-marker (tether--point (plist-get range :start)))
                                     (copy-marker (tether--point (plist-get range :end)) t)
                                     (plist-get edit :newText))))
                           (plist-get change :edits))))
        (save-excursion
          (save-restriction
            (widen)
            (pcase-dolist (`(,start ,end ,text) edits)
              (goto-char start)
              (delete-region start end)
              (insert text)))))
      ;; Report the change before answering, as VS Code does.
      (tether--sync connection buffer))))

(defun tether--save-documents (params)
  "`agent/saveDocuments': save the buffers of PARAMS' URIs."
  (let (saved)
    (seq-doseq (uri (plist-get params :uris))
      (when-let ((buffer (find-buffer-visiting (tether--file uri))))
        (with-current-buffer buffer
          (save-buffer)
          (push uri saved))))
    (list :saved (vconcat (nreverse saved)))))

;;; Diagnostics

(declare-function flymake-diagnostics "flymake" (&optional beg end))
(declare-function flymake-diagnostic-beg "flymake" (diag))
(declare-function flymake-diagnostic-end "flymake" (diag))
(declare-function flymake-diagnostic-type "flymake" (diag))
(declare-function flymake-diagnostic-text "flymake" (diag))
(declare-function flymake-diagnostic-data "flymake" (diag))
(declare-function flymake-diagnostic-backend "flymake" (diag))

(defun tether--diagnostics (connection params)
  "`agent/diagnostics': Flymake's problems in PARAMS' URIs (Eglot feeds Flymake).
Without URIs, those of every buffer of CONNECTION's project that has some."
  (let ((uris (plist-get params :uris))
        items)
    (if uris
        (seq-doseq (uri uris)
          (when-let ((buffer (find-buffer-visiting (tether--file uri))))
            (when (tether--flymake-p buffer)
              ;; The server's own URI back, so it matches whatever spelling it used.
              (push (list :uri uri :diagnostics (tether--buffer-diagnostics buffer)) items))))
      (dolist (buffer (tether--buffers (process-get (jsonrpc--process connection) 'tether-root)))
        (when (tether--flymake-p buffer)
          (let ((diagnostics (tether--buffer-diagnostics buffer)))
            (when (> (length diagnostics) 0)
              (push (list :uri (tether--uri (buffer-file-name buffer)) :diagnostics diagnostics)
                    items))))))
    (list :items (vconcat (nreverse items)))))

(defun tether--flymake-p (buffer)
  "Whether Flymake checks BUFFER (it need not be loaded at all)."
  (with-current-buffer buffer (bound-and-true-p flymake-mode)))

(defun tether--buffer-diagnostics (buffer)
  "BUFFER's Flymake diagnostics as a vector of LSP diagnostics."
  (with-current-buffer buffer
    (save-restriction
      (widen)
      (vconcat (mapcar #'tether--lsp-diagnostic (flymake-diagnostics))))))

(defun tether--lsp-diagnostic (diagnostic)
  "A Flymake DIAGNOSTIC as an LSP one.
Eglot's keep their language server's severity, source and code."
  (let* ((data (flymake-diagnostic-data diagnostic))
         (lsp (and (consp data) (consp (car data)) (alist-get 'eglot-lsp-diag data)))
         (category (get (flymake-diagnostic-type diagnostic) 'flymake-category))
         (backend (flymake-diagnostic-backend diagnostic))
         (source (or (plist-get lsp :source)
                     (and (not lsp) (symbolp backend) backend (symbol-name backend)))))
    (append
     (list :range (list :start (tether--position (flymake-diagnostic-beg diagnostic))
                        :end (tether--position (flymake-diagnostic-end diagnostic)))
           :severity (or (plist-get lsp :severity)
                         (pcase category ('flymake-error 1) ('flymake-warning 2) (_ 3)))
           ;; Eglot's text is "source [code]: message"; the server prints those itself.
           :message (or (plist-get lsp :message) (flymake-diagnostic-text diagnostic)))
     (and source (list :source source))
     (and (plist-get lsp :code) (list :code (plist-get lsp :code))))))

;;; Runs

(cl-defstruct (tether--run (:constructor tether--run-create))
  "A run in flight: ON-EVENT gets its events, ON-APPROVAL shows its approvals
\(nil: `*tether-approval*'), ON-FINISHED gets its result."
  connection id on-event on-approval on-finished)

(defvar tether--runs (make-hash-table :test #'equal)
  "Runs in flight by run id.")

(defvar tether-run-finished-functions nil
  "Functions called with the result plist of each finished run.")

(defun tether-running-p ()
  "Whether a run is in flight."
  (> (hash-table-count tether--runs) 0))

(defun tether--run-approval-function (run-id)
  "The function that shows RUN-ID's approvals itself, or nil."
  (when-let ((run (gethash run-id tether--runs)))
    (tether--run-on-approval run)))

(cl-defun tether--start-run (connection params &key on-event on-approval on-finished)
  "Send `agent/run' PARAMS (a plist with :runId) on CONNECTION; return the run id.
ON-EVENT, ON-APPROVAL and ON-FINISHED as in `tether--run'."
  (let ((run-id (plist-get params :runId)))
    (tether--sync-all connection)
    (setq tether--last-run (cons connection run-id) tether-last-result nil)
    (puthash run-id (tether--run-create :connection connection :id run-id
                                        :on-event on-event :on-approval on-approval
                                        :on-finished on-finished)
             tether--runs)
    (jsonrpc-async-request
     connection 'agent/run params
     :timeout nil
     :success-fn (lambda (result) (tether--run-ended run-id result))
     :error-fn (lambda (error)
                 (message "Tether: %s" (plist-get error :message))
                 (tether--run-ended run-id (list :runId run-id :outcome "error"
                                                 :error (plist-get error :message)))))
    run-id))

(defun tether--run-ended (run-id result)
  "RUN-ID ended with RESULT: tell its handler, `tether-run-finished-functions'."
  (let ((run (gethash run-id tether--runs)))
    (remhash run-id tether--runs)
    (setq tether-last-result result)
    (tether--show-approval)  ; a window kept for the run's next approval closes
    (when (and run (tether--run-on-finished run))
      (with-demoted-errors "Tether: showing the outcome failed: %S"
        (funcall (tether--run-on-finished run) result)))
    (run-hook-with-args 'tether-run-finished-functions result)))

(defun tether--new-run-id (kind)
  "A fresh run id for a run started by KIND (a string)."
  (format "emacs-%s-%s" kind (format-time-string "%s%N")))

;;; The transcript

(defvar tether-transcript-font-lock-keywords
  '(("^  \\(allow\\(?:-always\\)?\\):" 1 'tether-ok-face)
    ("^  \\(deny\\|withdrawn\\)\\b" 1 'tether-failed-face)
    ("^Tether \\(done\\) ·.*" . 'tether-outcome-face))
  "Faces of the `*tether*' lines that are not events' (those bring their own):
the answers to approvals, the outcomes echoed.")

(define-derived-mode tether-transcript-mode special-mode "Tether"
  "The `*tether*' transcript: prompts, the model's text, tool calls, outcomes."
  (setq-local font-lock-defaults '(tether-transcript-font-lock-keywords t)))

(define-key tether-transcript-mode-map (kbd "C-c C-t") #'tether-render-toggle-thinking)

(defun tether--log (format-string &rest args)
  "Append a line to `*tether*'."
  (with-current-buffer (get-buffer-create "*tether*")
    (unless (derived-mode-p 'tether-transcript-mode) (tether-transcript-mode))
    (let ((inhibit-read-only t))
      (save-excursion
        (goto-char (point-max))
        (insert (apply #'format format-string args) "\n")))))

(defun tether--think (item)
  "Put the model's thinking ITEM in `*tether*': a collapsed block.
See `tether-render-think'."
  (with-current-buffer (get-buffer-create "*tether*")
    (unless (derived-mode-p 'tether-transcript-mode) (tether-transcript-mode))
    (tether-render-think item (point-max))))

(defvar tether--transcript (tether-render-create :prompt t)
  "How `*tether*' shows events: with each run's prompt, each step's text whole.")

(defun tether--event (connection event)
  "CONNECTION's `agent/event' EVENT as transcript lines, and to its run's handler."
  (when (equal (plist-get event :kind) "run-finished")
    ;; The server withdraws its questions itself; this closes any it could not.
    (tether--close-run-approvals connection (plist-get event :runId) "the run ended"))
  (let ((lines (tether-render-event tether--transcript event)))  ; lines only: no :stream
    (tether-render-replace-progress (get-buffer-create "*tether*") lines)
    (dolist (line lines)
      (if (stringp line)
          (tether--log "%s" line)
        (tether--think line))))
  (when-let ((run (gethash (plist-get event :runId) tether--runs)))
    (when (tether--run-on-event run)
      (with-demoted-errors "Tether: showing an event failed: %S"
        (funcall (tether--run-on-event run) event)))))

;;; The connection

(defun tether--dispatch-request (connection method params)
  "Answer the server's request METHOD."
  (pcase method
    ('agent/approve (tether--approve params))
    ('workspace/applyEdit (tether--apply-edit connection params))
    ('agent/saveDocuments (tether--save-documents params))
    ('agent/diagnostics (tether--diagnostics connection params))
    ('agent/ask (tether--ask-user params))
    ('agent/code (tether-code-answer params))
    ('window/showMessageRequest (tether--ask params))
    ('window/workDoneProgress/create nil)
    ('workspace/configuration
     (make-vector (length (plist-get params :items)) nil))
    (_ (jsonrpc-error :code -32601 :message (format "%s is not supported" method)))))

(defun tether--dispatch-notification (connection method params)
  "Handle the server's notification METHOD."
  (pcase method
    ('agent/event (tether--event connection params))
    ('$/cancelRequest (tether--withdraw connection (plist-get params :id)))
    ('window/showMessage (message "%s" (plist-get params :message)))
    ('window/logMessage (tether--log "%s" (plist-get params :message)))))

(defun tether--connect (root)
  "Start `tether serve' for ROOT and initialize it."
  (let* ((default-directory root)
         (process (make-process
                   :name "tether" :command tether-server-command
                   :connection-type 'pipe :coding 'utf-8-emacs-unix :noquery t
                   :stderr (get-buffer-create "*tether stderr*")))
         (connection (make-instance 'tether-process-connection
                                    :name "tether" :process process
                                    :on-shutdown (lambda (connection)
                                                   (tether--close-run-approvals
                                                    connection nil "the server exited"))
                                    :request-dispatcher #'tether--dispatch-request
                                    :notification-dispatcher #'tether--dispatch-notification)))
    (process-put process 'tether-root root)
    (jsonrpc-request
     connection 'initialize
     (list :processId (emacs-pid)
           :rootUri (tether--uri root)
           :workspaceFolders (vector (list :uri (tether--uri root)
                                           :name (file-name-nondirectory
                                                  (directory-file-name root))))
           :initializationOptions (or tether-initialization-options (make-hash-table))
           :capabilities
           (list :general (list :positionEncodings ["utf-32"])
                 :workspace (list :applyEdit t
                                  :workspaceEdit (list :documentChanges t
                                                       :resourceOperations ["create"]))
                 :textDocument (list :synchronization (list :didSave t))
                 :experimental (list :tether (append
                                              (list :events t :approvals t
                                                    :saveDocuments t :diagnostics t
                                                    :ask t
                                                    ;; a change of several files is
                                                    ;; shown whole, in diff-mode
                                                    :changeSets t)
                                              ;; Eglot's servers answer the code tools
                                              (and (tether-code-available-p)
                                                   (list :code t)))))))
    (jsonrpc-notify connection 'initialized (make-hash-table))
    (puthash root connection tether--connections)
    connection))

(defun tether-connection ()
  "The Tether connection of the current project, started when needed."
  (let* ((root (tether--root))
         (connection (gethash root tether--connections)))
    (if (and connection (jsonrpc-running-p connection))
        connection
      (tether--connect root))))

;;; Commands

(defun tether--context ()
  "The current buffer and region as a run's context, or nil."
  (when buffer-file-name
    (append (list :uri (tether--uri buffer-file-name))
            (when (use-region-p)
              (list :selection (list :start (tether--position (region-beginning))
                                     :end (tether--position (region-end))))))))

(defun tether--finished (result)
  "Show a finished run's RESULT."
  (let ((line (format "Tether %s · %s steps · %s" (plist-get result :outcome)
                      (or (plist-get result :steps) 0)
                      (tether-render-shown
                       (tether-render-first-line (or (plist-get result :error)
                                                     (plist-get result :answer)))))))
    (tether--log "%s" line)
    (message "%s" line)))

;;;###autoload
(defun tether-run (prompt)
  "Ask the Tether agent to do PROMPT (asynchronously).
The current buffer and region are its context; unsaved buffers are sent first."
  (interactive "sTether: ")
  (let ((connection (tether-connection))
        (context (tether--context)))
    (display-buffer (get-buffer-create "*tether*"))
    (tether--start-run
     connection
     (append (list :prompt prompt :runId (tether--new-run-id "run"))
             (and context (list :context context)))
     :on-finished #'tether--finished)))

;;;###autoload
(defun tether-cancel ()
  "Stop the last run."
  (interactive)
  (when tether--last-run
    (jsonrpc-async-request (car tether--last-run) 'agent/cancel
                           (list :runId (cdr tether--last-run))
                           :success-fn #'ignore)))

(provide 'tether)
;;; tether.el ends here
