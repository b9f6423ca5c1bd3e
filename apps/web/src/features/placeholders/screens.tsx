// Screens owned by later features. Each keeps its final route and title.
import { Link, useParams } from 'react-router-dom';
import { Placeholder } from './Placeholder.tsx';

export function DailyMessageScreen() {
  const { id } = useParams();
  return (
    <Placeholder title="Daily Message" subtitle={`Message ${id}`}>
      <p>
        <Link to="/resources">Back to resources</Link>
      </p>
    </Placeholder>
  );
}
