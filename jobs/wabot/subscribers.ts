import { useAutoReplySubscriber } from './auto-reply.js';
import { useGroupNoticeSubscriber } from './group-notices.js';

/**
 * Registers the chat bot's event subscribers in this process (startWorkers does while it runs
 * `event-dispatch`): the auto-reply on `inbound_chat_message` (issue 11 item 2) and the groups'
 * notices on `ticket_incident_created` (issue 11 item 4). Both are reference-counted.
 * @returns the release function of both (idempotent)
 */
export function useChatBotSubscribers(): () => void {
  const releaseAutoReply = useAutoReplySubscriber();
  const releaseGroupNotices = useGroupNoticeSubscriber();
  return () => {
    releaseAutoReply();
    releaseGroupNotices();
  };
}
