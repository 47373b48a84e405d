;;; withdraw-story.el --- The server withdraws an approval the user has not answered  -*- lexical-binding: t; -*-

;; Environment as story.el, plus TETHER_PROXY / TETHER_PROXY_LOG (the wire recorder the
;; server runs behind) and TETHER_WITHDRAW: "timeout" (the user does not answer within
;; approvalTimeoutSeconds) or "cancel" (the user cancels the run while the approval is
;; shown); with TETHER_READ (an Emacs on a terminal), the user opens `M-x tether-approve'
;; on it and leaves the minibuffer open.  Every phase waits for its condition with a bound and the report says what was
;; seen, so a client that misbehaves yields a report rather than a hang.

(require 'json)
(add-to-list 'load-path (getenv "TETHER_EL_DIR"))
(require 'tether)

(run-with-timer 90 nil (lambda () (message "withdraw-story.el: watchdog fired") (kill-emacs 3)))

(setq tether-server-command
      (list (getenv "TETHER_PYTHON") (getenv "TETHER_PROXY") (getenv "TETHER_PROXY_LOG")
            (getenv "TETHER_PYTHON") "-m" "tether" "serve"))
(setq tether-initialization-options
      (append (list :provider "scripted" :script (getenv "TETHER_SCRIPT_FILE"))
              (when (equal (getenv "TETHER_WITHDRAW") "timeout")
                (list :approvalTimeoutSeconds 2))))

(defvar withdraw-report nil "What the story saw, as an alist.")

(defun withdraw-note (key value)
  "Add KEY = VALUE to the report."
  (push (cons key value) withdraw-report))

(defun withdraw-wait (what condition seconds)
  "Wait up to SECONDS for CONDITION; note WHAT as t or nil."
  (let ((deadline (+ (float-time) seconds)))
    (while (and (not (funcall condition)) (< (float-time) deadline))
      (accept-process-output nil 0.05))
    (withdraw-note what (if (funcall condition) t :json-false))))

(defun withdraw-shown ()
  "The text of the approval buffer, or nil when none is shown."
  (when-let ((buffer (get-buffer "*tether-approval*")))
    (with-current-buffer buffer (buffer-string))))

(defun withdraw-messages ()
  "The echo area's history."
  (with-current-buffer "*Messages*" (buffer-string)))

(let* ((root (file-name-as-directory (getenv "TETHER_ROOT")))
       (default-directory root))
  (condition-case err
      (progn
        (find-file (expand-file-name "src/app.py" root))
        (tether-run "say hi")
        ;; 1. The approval of the edit is shown; the user does not answer it.
        (withdraw-wait 'firstShown
                       (lambda () (string-match-p "'hi '" (or (withdraw-shown) ""))) 30)
        (withdraw-note 'keys (if (get-buffer "*tether-approval*")
                                 (with-current-buffer "*tether-approval*"
                                   (vconcat (mapcar (lambda (key) (format "%s" (key-binding key)))
                                                    '("a" "A" "d" "q"))))
                               :json-false))
        (when (equal (getenv "TETHER_WITHDRAW") "cancel")
          (call-interactively #'tether-cancel))
        (when (getenv "TETHER_READ")
          ;; An interactive Emacs: the user opens the minibuffer prompt and leaves it
          ;; open; it returns only when something closes it.
          (withdraw-note 'readFrom (minibuffer-depth))
          (call-interactively #'tether-approve)
          (withdraw-note 'readClosed (minibuffer-depth)))
        ;; 2. The server withdraws it: Emacs says so and closes it.
        (withdraw-wait 'toldWithdrawn
                       (lambda () (string-match-p "Tether: approval withdrawn"
                                                  (withdraw-messages)))
                       30)
        (withdraw-note 'shownAfterWithdraw (or (withdraw-shown) :json-false))
        (withdraw-note 'pendingAfterWithdraw (vconcat (tether-pending-approvals)))
        ;; With "cancel", the user answers late (no other approval can be waiting now):
        ;; nothing may be sent.
        (when (equal (getenv "TETHER_WITHDRAW") "cancel")
          (withdraw-wait 'finished (lambda () tether-last-result) 30)
          (tether-approval-allow))
        ;; 3. With "timeout", the model goes on and asks again: that approval works.
        (when (equal (getenv "TETHER_WITHDRAW") "timeout")
          (withdraw-wait 'secondShown
                         (lambda () (string-match-p "later" (or (withdraw-shown) ""))) 30)
          (with-current-buffer "*tether-approval*"
            (call-interactively (key-binding "a"))))
        (withdraw-wait 'finished (lambda () tether-last-result) 30))
    (error (withdraw-note 'error (error-message-string err))))
  (with-temp-file (getenv "TETHER_RESULT")
    (insert
     (json-encode
      (append withdraw-report
              `((outcome . ,(plist-get tether-last-result :outcome))
                (transcript . ,(if (get-buffer "*tether*")
                                   (with-current-buffer "*tether*" (buffer-string))
                                 ""))
                (messages . ,(withdraw-messages)))))))
  (kill-emacs 0))
