;;; tether-jobs.el --- Tether's background jobs: a list, and a buffer following each  -*- lexical-binding: t; -*-

;;; Commentary:

;; A background job is a command the model started with `bash''s `background: true':
;; it keeps running after its call.  M-x tether-jobs lists the jobs of the chat's
;; session (`*tether-chat*'), else of every session of this project's server, in
;; `*tether-jobs*' (`agent/jobs'): RET opens the job under point, `k' stops it, `g'
;; lists again.  `*tether-job job-1*' follows what the job prints (`agent/jobOutput',
;; asked every `tether-job-poll-interval' seconds while a window shows the buffer and the
;; job runs); `k' there stops the job (`agent/jobStop').  The server escapes the output;
;; the command line (the model's text) is escaped here.

;;; Code:

(require 'jsonrpc)
(require 'seq)
(require 'subr-x)
(require 'tabulated-list)
(require 'tether)
(require 'tether-render)

(defcustom tether-job-poll-interval 0.5
  "Seconds between two reads of a shown job's output."
  :type 'number
  :group 'tether)

(defvar-local tether-jobs--connection nil
  "The server the jobs of this buffer are asked of.")

(defvar-local tether-jobs--session nil
  "The session whose jobs are listed (nil: every session of the server).")

(defun tether-jobs--chat-session ()
  "The session of the project's chat, or nil."
  (let ((chat (get-buffer "*tether-chat*")))
    (and chat (boundp 'tether-chat--session-id)
         (buffer-local-value 'tether-chat--session-id chat))))

(defun tether-jobs--command-line (command)
  "COMMAND (the model's text) on one line, escaped."
  (tether-render-shown (string-join (split-string (or command "")) " ") t))

(defun tether-jobs--state (job)
  "The state of JOB (a plist) in words."
  (let ((state (plist-get job :state)))
    (if (equal state "exited")
        (format "exited %s" (plist-get job :exitCode))
      state)))

;;; The list

(defvar tether-jobs-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'tether-jobs-open)
    (define-key map "k" #'tether-jobs-stop)
    map)
  "Keys of `*tether-jobs*'.")

(define-derived-mode tether-jobs-mode tabulated-list-mode "Tether-Jobs"
  "The background jobs of a Tether session.
RET opens one, `k' stops it, `g' lists again."
  (setq tabulated-list-format
        [("Job" 6 nil) ("State" 10 nil) ("Time" 7 nil :right-align t)
         ("Command" 40 nil) ("Last line" 0 nil)])
  (setq tabulated-list-padding 0)
  (add-hook 'tabulated-list-revert-hook #'tether-jobs--refresh nil t)
  (tabulated-list-init-header))

(defun tether-jobs--fill (buffer jobs)
  "Show JOBS (plists) in BUFFER."
  (when (buffer-live-p buffer)
    (with-current-buffer buffer
      (setq tabulated-list-entries
            (mapcar (lambda (job)
                      (list job
                            (vector (plist-get job :jobId)
                                    (tether-jobs--state job)
                                    (format "%d s" (round (or (plist-get job :runtimeSeconds) 0)))
                                    (tether-jobs--command-line (plist-get job :command))
                                    (or (plist-get job :lastLine) ""))))
                    jobs))
      (tabulated-list-print t)
      (unless jobs (message "Tether: no background jobs in this session")))))

(defun tether-jobs--refresh ()
  "Ask the server for the jobs again (`g')."
  (let ((buffer (current-buffer)))
    (jsonrpc-async-request
     tether-jobs--connection 'agent/jobs
     (if tether-jobs--session (list :sessionId tether-jobs--session) (make-hash-table))
     :timeout 30
     :success-fn (lambda (result)
                   (tether-jobs--fill buffer (append (plist-get result :jobs) nil)))
     :error-fn (lambda (error)
                 (message "Tether: jobs: %s" (plist-get error :message))))))

;;;###autoload
(defun tether-jobs ()
  "List the background jobs of the chat's session (else of every session)."
  (interactive)
  (let ((connection (tether-connection))
        (session (tether-jobs--chat-session)))
    (with-current-buffer (get-buffer-create "*tether-jobs*")
      (tether-jobs-mode)
      (setq tether-jobs--connection connection
            tether-jobs--session session)
      (tether-jobs--refresh)
      (pop-to-buffer (current-buffer)))))

(defun tether-jobs--at-point ()
  "The job on this line, or an error."
  (or (tabulated-list-get-id) (user-error "No job on this line")))

(defun tether-jobs-open ()
  "Open the buffer following the job on this line."
  (interactive)
  (tether-job-open tether-jobs--connection (tether-jobs--at-point)))

(defun tether-jobs-stop ()
  "Stop the job on this line."
  (interactive)
  (let ((job (tether-jobs--at-point))
        (list (current-buffer)))
    (tether-jobs--stop tether-jobs--connection (plist-get job :sessionId) (plist-get job :jobId)
                       (lambda () (when (buffer-live-p list)
                                    (with-current-buffer list (tether-jobs--refresh)))))))

(defun tether-jobs--stop (connection session job-id then)
  "Stop JOB-ID of SESSION on CONNECTION; then call THEN."
  (jsonrpc-async-request
   connection 'agent/jobStop (list :sessionId session :jobId job-id)
   :timeout 30
   :success-fn (lambda (result)
                 (message "Tether: %s" (if (eq (plist-get result :stopped) t)
                                           (format "stopped %s" job-id)
                                         (format "%s is not running" job-id)))
                 (funcall then))
   :error-fn (lambda (error)
               (message "Tether: %s: %s" job-id (plist-get error :message)))))

;;; One job's output

(defvar-local tether-job--job nil
  "The job this buffer follows (a plist: :sessionId, :jobId, :command).")

(defvar-local tether-job--next 0
  "Where the next read of the job's output starts.")

(defvar-local tether-job--state "running"
  "The job's state as last read.")

(defvar-local tether-job--timer nil
  "The timer reading the job's output while it runs.")

(defvar-local tether-job--busy nil
  "Non-nil while a read is in flight.")

(defvar tether-job-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map "k" #'tether-job-stop)
    map)
  "Keys of a `*tether-job ...*' buffer.")

(define-derived-mode tether-job-mode special-mode "Tether-Job"
  "What a background job prints, as it prints it.
`k' stops the job, `q' quits."
  (setq buffer-undo-list t)
  (add-hook 'kill-buffer-hook #'tether-job--cancel nil t))

(defun tether-job--cancel ()
  "Stop reading the job's output."
  (when (timerp tether-job--timer)
    (cancel-timer tether-job--timer))
  (setq tether-job--timer nil))

(defun tether-job--header (state)
  "The first line of the buffer: the job, its STATE and its command."
  (format "%s · %s · %s\n" (plist-get tether-job--job :jobId) state
          (tether-jobs--command-line (plist-get tether-job--job :command))))

(defun tether-job--add (result)
  "Add what a read (RESULT, an `agent/jobOutput' answer) returned."
  (let* ((inhibit-read-only t)
         (end (point-max))
         (following (seq-filter (lambda (w) (= (window-point w) end))
                                (get-buffer-window-list (current-buffer) nil t)))
         (state (plist-get result :state))
         (lost (or (plist-get result :lost) 0))
         (note (plist-get result :note)))
    (setq tether-job--next (or (plist-get result :next) tether-job--next))
    (save-excursion
      (unless (equal state tether-job--state)
        (setq tether-job--state state)
        (goto-char (point-min))
        (delete-region (point) (line-beginning-position 2))
        (insert (tether-job--header (tether-jobs--state result))))
      (goto-char (point-max))
      (when (> lost 0)
        (unless (bolp) (insert "\n"))
        (insert (format "… [%d characters cut] …\n" lost)))
      (insert (or (plist-get result :text) ""))
      (when (and (stringp note) (not (equal state "running")))
        (unless (bolp) (insert "\n"))
        (insert (format "[%s]\n" (tether-render-shown note t)))))
    (set-buffer-modified-p nil)
    (dolist (window following)
      (set-window-point window (point-max)))))

(defun tether-job--poll (buffer)
  "Read what BUFFER's job printed since the last read (when a window shows it)."
  (when (buffer-live-p buffer)
    (with-current-buffer buffer
      (when (and (not tether-job--busy) (get-buffer-window buffer t))
        (setq tether-job--busy t)
        (jsonrpc-async-request
         tether-jobs--connection 'agent/jobOutput
         (list :sessionId (plist-get tether-job--job :sessionId)
               :jobId (plist-get tether-job--job :jobId)
               :since tether-job--next)
         :timeout 30
         :success-fn
         (lambda (result)
           (when (buffer-live-p buffer)
             (with-current-buffer buffer
               (setq tether-job--busy nil)
               (tether-job--add result)
               (unless (equal (plist-get result :state) "running")
                 (tether-job--cancel)))))
         :error-fn
         (lambda (error)
           (when (buffer-live-p buffer)
             (with-current-buffer buffer
               (setq tether-job--busy nil)
               (tether-job--cancel)))
           (message "Tether: %s" (plist-get error :message))))))))

(defun tether-job-open (connection job)
  "Open `*tether-job ID*' following JOB (a plist from `agent/jobs') on CONNECTION."
  (let ((buffer (get-buffer-create (format "*tether-job %s*" (plist-get job :jobId)))))
    (with-current-buffer buffer
      (unless (and (derived-mode-p 'tether-job-mode)
                   (equal (plist-get tether-job--job :sessionId) (plist-get job :sessionId)))
        (tether-job--cancel)
        (tether-job-mode)
        (setq tether-jobs--connection connection
              tether-job--job job
              tether-job--next 0
              tether-job--state "running")
        (let ((inhibit-read-only t))
          (erase-buffer)
          (insert (tether-job--header "running"))))
      (when (and (not (timerp tether-job--timer)) (equal tether-job--state "running"))
        (setq tether-job--timer
              (run-at-time 0 tether-job-poll-interval #'tether-job--poll buffer))))
    (pop-to-buffer buffer)
    buffer))

(defun tether-job-stop ()
  "Stop the job this buffer follows."
  (interactive)
  (let ((buffer (current-buffer)))
    (tether-jobs--stop tether-jobs--connection (plist-get tether-job--job :sessionId)
                       (plist-get tether-job--job :jobId)
                       (lambda () (tether-job--poll buffer)))))

(provide 'tether-jobs)
;;; tether-jobs.el ends here
