;;; tether-rewind.el --- Go back to before a step of a Tether session  -*- lexical-binding: t; -*-

;;; Commentary:

;; M-x tether-rewind: the session's checkpoints (`agent/checkpoints': one before every
;; step that can change files), newest first, read with `completing-read' -- step, the
;; call, the files it changed, the time, all shown escaped -- then what to restore
;; (files and conversation, files only, conversation only), then `agent/rewind'.  The
;; echo area says what was restored and what conflicted: a file changed since by someone
;; else (on disk, or unsaved in its buffer) is kept as it is, and the user is asked
;; whether to force it.  Restored files that a buffer visits come back through the
;; buffer, as the server's edits do.  The session is the chat's in `*tether-chat*',
;; else the last run's.

;;; Code:

(require 'cl-lib)
(require 'jsonrpc)
(require 'parse-time)
(require 'subr-x)
(require 'tether)
(require 'tether-render)

(defun tether-rewind--shown (text)
  "TEXT (from the server) on one line, escaped."
  (tether-render-shown (if (stringp text) text (format "%s" (or text ""))) t))

(defun tether-rewind--path (uri)
  "The file of URI as shown: relative to the project's root when under it."
  (if (not (stringp uri))
      "?"
    (let ((file (ignore-errors (tether--file uri)))
          (root (ignore-errors (tether--root))))
      (tether-rewind--shown
       (cond ((null file) uri)
             ((and root (file-in-directory-p file root)) (file-relative-name file root))
             (t (abbreviate-file-name file)))))))

(defun tether-rewind--time (stamp)
  "ISO 8601 STAMP as local HH:MM:SS, or \"?\"."
  (or (ignore-errors (format-time-string "%H:%M:%S" (parse-iso8601-time-string stamp)))
      "?"))

(defun tether-rewind-format (checkpoint)
  "CHECKPOINT (a plist) as one line: step, call, files changed, time."
  (let* ((files (mapcar (lambda (file)
                          (format "%s (%s%s)"
                                  (let ((path (plist-get file :path)))
                                    (if (and (stringp path) (not (string-empty-p path)))
                                        (tether-rewind--shown path)
                                      (tether-rewind--path (plist-get file :uri))))
                                  (tether-rewind--shown (plist-get file :change))
                                  (if (eq (plist-get file :restorable) :json-false)
                                      ", not restorable" "")))
                        (plist-get checkpoint :files)))
         (what (if files (string-join files ", ") "no files changed"))
         (title (plist-get checkpoint :title)))
    (when (stringp (plist-get checkpoint :incomplete))
      (setq what (concat what " · incomplete: "
                         (tether-rewind--shown (plist-get checkpoint :incomplete)))))
    (format "step %s · %s · %s · %s"
            (tether-rewind--shown (plist-get checkpoint :step))
            (truncate-string-to-width
             (tether-rewind--shown (if (and (stringp title) (not (string-empty-p title)))
                                       title
                                     (plist-get checkpoint :tool)))
             80)
            what
            (tether-rewind--time (plist-get checkpoint :time)))))

(defun tether-rewind--count (n what)
  "N WHAT, plural when N is not 1."
  (format "%d %s%s" n what (if (= n 1) "" "s")))

(defun tether-rewind-describe (checkpoint result)
  "What `agent/rewind' answered (RESULT) for CHECKPOINT, as a message."
  (let* ((restored (mapcar #'tether-rewind--path (plist-get result :restored)))
         (lines (list (concat (format "rewound to before step %s: %s restored"
                                      (tether-rewind--shown (plist-get checkpoint :step))
                                      (tether-rewind--count (length restored) "file"))
                              (if restored
                                  (format " (%s)" (string-join restored ", "))
                                "")))))
    (dolist (uri (append (plist-get result :conflicts) nil))
      (push (format "conflict: %s changed since, kept as you have it"
                    (tether-rewind--path uri))
            lines))
    (dolist (uri (append (plist-get result :notRestorable) nil))
      (push (format "not restorable: %s (its earlier content was not kept)"
                    (tether-rewind--path uri))
            lines))
    (dolist (uri (append (plist-get result :failed) nil))
      (push (format "failed: %s" (tether-rewind--path uri)) lines))
    (when (eq (plist-get result :conversation) t)
      (push "the conversation continues from before that step" lines))
    (when (and (stringp (plist-get result :note))
               (not (string-empty-p (plist-get result :note))))
      (push (tether-rewind--shown (plist-get result :note)) lines))
    (string-join (nreverse lines) "\n")))

(defun tether-rewind--session ()
  "The session to rewind: the chat's in a chat buffer, else the last run's."
  (or (and (boundp 'tether-chat--session-id) tether-chat--session-id)
      (plist-get tether-last-result :sessionId)
      (when-let ((chat (get-buffer "*tether-chat*")))
        (buffer-local-value 'tether-chat--session-id chat))))

(defconst tether-rewind--restore
  '(("files and conversation" . "both")
    ("files only" . "files")
    ("conversation only" . "conversation"))
  "What a rewind can restore: the choice shown, the `restore' sent.")

(defun tether-rewind--send (connection params checkpoint)
  "Send `agent/rewind' PARAMS on CONNECTION; say what it did to CHECKPOINT's files."
  (jsonrpc-async-request
   connection 'agent/rewind params
   :success-fn
   (lambda (result)
     (message "Tether: %s" (tether-rewind-describe checkpoint result))
     (let ((conflicts (append (plist-get result :conflicts) nil)))
       (when (and conflicts (not (plist-get params :force)))
         ;; Asked from a timer: not from the process filter that read the answer.
         (run-at-time 0 nil #'tether-rewind--ask-force connection params checkpoint
                      conflicts))))
   :error-fn
   (lambda (error)
     (message "Tether: rewind: %s" (tether-rewind--shown (plist-get error :message))))))

(defun tether-rewind--ask-force (connection params checkpoint conflicts)
  "Ask whether to force CONFLICTS of the rewind PARAMS to CHECKPOINT on CONNECTION."
  (let* ((keep "keep mine")
         (force "force: put the checkpoint's version back")
         (answer (completing-read
                  (format "Tether: %s conflicted (%s): "
                          (tether-rewind--count (length conflicts) "file")
                          (string-join (mapcar #'tether-rewind--path conflicts) ", "))
                  (list keep force) nil t nil nil keep)))
    (when (equal answer force)
      (tether-rewind--send connection
                           (list :sessionId (plist-get params :sessionId)
                                 :checkpointId (plist-get params :checkpointId)
                                 :restore "files" :force t)
                           checkpoint))))

(defun tether-rewind--unique (checkpoints)
  "An alist (LABEL . CHECKPOINT) of CHECKPOINTS, each label unique."
  (let ((seen (make-hash-table :test #'equal)) alist)
    (dolist (checkpoint checkpoints)
      (let ((label (tether-rewind-format checkpoint)))
        (when (gethash label seen)
          (setq label (format "%s [%s]" label
                              (tether-rewind--shown (plist-get checkpoint :id)))))
        (puthash label t seen)
        (push (cons label checkpoint) alist)))
    (nreverse alist)))

;;;###autoload
(defun tether-rewind ()
  "Go back to before a step of the session: its files, its conversation or both.
The session is the chat's when called from `*tether-chat*', else the last run's."
  (interactive)
  (let ((session (tether-rewind--session))
        (connection (tether-connection)))
    (unless session
      (user-error "Tether: no session to rewind yet: run a prompt first"))
    (tether--sync-all connection) ; the server must see unsaved typing: it is a conflict
    (let* ((result (condition-case failed
                       (jsonrpc-request connection 'agent/checkpoints
                                        (list :sessionId session) :timeout 30)
                     (jsonrpc-error
                      (user-error "Tether: checkpoints: %s"
                                  (tether-rewind--shown
                                   (or (alist-get 'jsonrpc-error-message (cddr failed))
                                       (format "%S" (cdr failed))))))))
           (checkpoints (reverse (append (plist-get result :checkpoints) nil))))
      (if (null checkpoints)
          (message "Tether: no checkpoints in this session: no step changed files yet")
        (let* ((choices (tether-rewind--unique checkpoints))
               (label (completing-read "Tether: rewind to before: " choices nil t))
               (checkpoint (cdr (assoc label choices)))
               (restore (completing-read "Tether: restore: " tether-rewind--restore
                                         nil t nil nil "files and conversation")))
          (unless checkpoint
            (user-error "Tether: no such checkpoint: %s" label))
          (tether-rewind--send
           connection
           (list :sessionId session
                 :checkpointId (plist-get checkpoint :id)
                 :restore (or (cdr (assoc restore tether-rewind--restore)) "both"))
           checkpoint))))))

(provide 'tether-rewind)
;;; tether-rewind.el ends here
